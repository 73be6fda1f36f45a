import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { db } from '../../lib/db';
import { knexPool, observeDbPool, startMetricsServer } from '../../lib/metrics';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connectedPersonalProject } from '../support/network';
import { waitFor } from '../support/wait';

// issue 17: the Prometheus metrics an operator reads, scraped from /metrics on the metrics
// port (not the API port) after a scheduled post was published by the worker. API and worker
// run in this process here, so one registry holds both sides' series.

/** The value of one sample line, 0 when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const line = text.split('\n').find((l) => {
    if (!l.startsWith(`${name}{`) && !l.startsWith(`${name} `)) return false;
    return Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`));
  });
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('Prometheus /metrics', function () {
  this.timeout(90_000);
  const api = useApi();
  let worker: ServiceWorker;
  let running: Promise<void>;
  let metrics: Server;
  let metricsUrl: string;

  before(async () => {
    ({ worker } = await createWorker());
    running = worker.run();
    observeDbPool(() => knexPool(db() as never));
    metrics = await startMetricsServer(0, '127.0.0.1');
    metricsUrl = `http://127.0.0.1:${(metrics.address() as AddressInfo).port}/metrics`;
  });
  after(async () => {
    worker.shutdown();
    await running;
    metrics.close();
  });

  const scrape = async () => {
    const res = await fetch(metricsUrl);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    return res.text();
  };

  it('counts requests, replays, refusals and the publish outcome and lag of a scheduled post', async () => {
    const before = await scrape();
    const ws = await workspaceWithKey({ projects: 0 });
    const call = client(api.url, ws.key);
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const body = { projectId: project.id, content: 'Metrics post', scheduledFor: new Date(Date.now() + 1_500).toISOString() };
    const created = await call('POST', '/v1/posts', { body, headers: { 'Idempotency-Key': `metrics-${ws.workspace.id}` } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const replay = await call('POST', '/v1/posts', { body, headers: { 'Idempotency-Key': `metrics-${ws.workspace.id}` } });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    const missing = await client(api.url, 'sk_not_a_key')('GET', '/v1/posts');
    assert.equal(missing.status, 401);
    const id = created.body.data.id;
    await waitFor(async () => (await db()('posts').where({ id }).first('status')).status === 'published', 30_000, 'published');

    const text = await waitFor(
      async () => {
        const t = await scrape();
        return (
          sample(t, 'publish_attempts_total', { outcome: 'published' }) >
            sample(before, 'publish_attempts_total', { outcome: 'published' }) && t
        );
      },
      10_000,
      'the publish metric',
    );
    const created200 = { operation: 'posts.create', method: 'POST', status: '200' };
    assert.ok(sample(text, 'http_requests_total', created200) - sample(before, 'http_requests_total', created200) >= 2);
    assert.ok(sample(text, 'http_requests_total', { operation: 'posts.list', status: '401' }) >= 1);
    assert.ok(sample(text, 'http_request_duration_seconds_count', created200) >= 2);
    assert.ok(sample(text, 'http_request_duration_seconds_bucket', { ...created200, le: '+Inf' }) >= 2);
    assert.ok(
      sample(text, 'idempotent_replays_total', { operation: 'posts.create' }) >
        sample(before, 'idempotent_replays_total', { operation: 'posts.create' }),
    );
    assert.ok(sample(text, 'publish_lag_seconds_count') > sample(before, 'publish_lag_seconds_count'));
    assert.ok(sample(text, 'publish_lag_seconds_sum') >= 0);
    assert.ok(sample(text, 'db_pool_connections', { state: 'max' }) > 0);
    assert.match(text, /# TYPE rate_limit_refusals_total counter/);
    assert.match(text, /# TYPE webhook_delivery_attempts_total counter/);
    assert.match(text, /# TYPE job_duration_seconds histogram/);
    assert.match(text, /process_cpu_seconds_total/);
  });

  it('is not served on the public API port', async () => {
    const res = await fetch(`${api.url}/metrics`);
    assert.equal(res.status, 404);
  });
});
