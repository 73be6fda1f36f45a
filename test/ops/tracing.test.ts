import assert from 'node:assert/strict';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { db } from '../../lib/db';
import { startTracing, stopTracing, tracingActive, tracingRequested } from '../../lib/telemetry';
import { closeTemporalClient } from '../../lib/temporal/client';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { client, startApi, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connectedPersonalProject } from '../support/network';
import { waitFor } from '../support/wait';

// OpenTelemetry traces (lib/telemetry.ts, docs/operations.md "Traces") over the real API, the
// real Temporal dev server, a worker in this process, Postgres, Redis and the network
// simulator, with an in-memory exporter in place of OTLP.

describe('tracing is off unless the OTEL_* variables ask for it', () => {
  it('reads the standard variables', () => {
    assert.equal(tracingRequested({}), false, 'nothing set: off');
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true);
    assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' }), true, 'the default endpoint (localhost:4318)');
    assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), false);
    assert.equal(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), false);
    assert.equal(tracingRequested({ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), true);
    assert.throws(() => tracingRequested({ OTEL_TRACES_EXPORTER: 'zipkin' }), /only "otlp"/);
  });

  it('is off in this run until a test starts it', () => {
    assert.equal(tracingActive(), false);
  });
});

describe('one trace from PATCH /v1/posts/{id} to the publish activity (real Temporal, worker in-process)', function () {
  this.timeout(180_000);
  const exporter = new InMemorySpanExporter();
  let api: TestServer;
  let worker: ServiceWorker;
  let running: Promise<void>;

  before(async () => {
    await startTracing({ serviceName: 'content-scheduler-test', spanProcessor: new SimpleSpanProcessor(exporter) });
    // The shared client was built before tracing started: the next one carries the interceptor.
    await closeTemporalClient();
    api = await startApi();
    ({ worker } = await createWorker());
    running = worker.run();
  });
  after(async () => {
    worker?.shutdown();
    await running;
    await api?.close();
    await closeTemporalClient();
    await stopTracing();
  });

  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((s) => s.name === name);
  const parentOf = (s: ReadableSpan) => spans().find((p) => p.spanContext().spanId === s.parentSpanId);

  it('links the request that scheduled a draft to the activity that published it later', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const call = client(api.url, ws.key);
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const created = await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'Traced post' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.data.id;
    const patched = await call('PATCH', `/v1/posts/${id}`, {
      body: { scheduledFor: new Date(Date.now() + 2_000).toISOString() },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const requestId = patched.headers.get('x-request-id');
    await waitFor(async () => (await db()('posts').where({ id }).first()).status === 'published', 60_000, 'published');

    const patch = await waitFor(
      async () => named('PATCH /v1/posts/:postId').find((s) => s.attributes['content_scheduler.request_id'] === requestId),
      10_000,
      `the PATCH request span among ${[...new Set(spans().map((s) => `${s.name} ${s.attributes['content_scheduler.request_id']}`))].join(', ')} (${requestId})`,
    );
    assert.equal(patch.attributes['http.response.status_code'], 200);
    // The activity ran seconds after the request returned, on the worker, in the request's trace.
    const activity = await waitFor(
      async () => named('RunActivity:publishPost').find((s) => s.spanContext().traceId === patch.spanContext().traceId),
      30_000,
      'the publish activity span in the PATCH trace',
    );
    assert.ok(activity.startTime[0] * 1e3 + activity.startTime[1] / 1e6 >= patch.endTime[0] * 1e3 + patch.endTime[1] / 1e6);
    // Walk from the activity up to the request: activity -> workflow's activity start -> the
    // workflow run -> the client's signal-with-start -> the request.
    const chain = await waitFor(
      async () => {
        const names: string[] = [];
        let s: ReadableSpan | undefined = activity;
        while (s) {
          names.push(s.name);
          if (s === patch) return names;
          s = parentOf(s);
        }
        return false;
      },
      30_000,
      'an unbroken parent chain from the activity to the request',
    ).catch((err: Error) => {
      const inTrace = spans().filter((s) => s.spanContext().traceId === patch.spanContext().traceId);
      throw new Error(`${err.message}: ${inTrace.map((s) => `${s.name}(${s.spanContext().spanId}<-${s.parentSpanId})`).join(', ')}`);
    });
    assert.deepEqual(chain, [
      'RunActivity:publishPost',
      'StartActivity:publishPost',
      'RunWorkflow:publishPostWorkflow',
      'SignalWithStartWorkflow:publishPostWorkflow',
      'PATCH /v1/posts/:postId',
    ]);
    // The POST that created the draft is a trace of its own.
    const post = named('POST /v1/posts').find((s) => s.attributes['content_scheduler.request_id'] === created.headers.get('x-request-id'));
    assert.ok(post);
    assert.notEqual(post.spanContext().traceId, patch.spanContext().traceId);

    // Inside the request: Postgres and Redis calls are its descendants.
    const inPatch = spans().filter((s) => s.spanContext().traceId === patch.spanContext().traceId);
    assert.ok(
      inPatch.some((s) => s.attributes['db.system'] === 'postgresql'),
      `a Postgres span in the PATCH trace: ${inPatch.map((s) => s.name).join(', ')}`,
    );
    assert.ok(
      inPatch.some((s) => s.attributes['db.system'] === 'redis'),
      `a Redis span in the PATCH trace: ${inPatch.map((s) => s.name).join(', ')}`,
    );
    // Inside the activity: the outbound call that created the post on the network (fetch).
    const outbound = inPatch.filter((s) => s.kind === 2 /* CLIENT */ && typeof s.attributes['url.full'] === 'string');
    assert.ok(
      outbound.some((s) => String(s.attributes['url.full']).startsWith(process.env.NETWORK_API_URL!)),
      `an outbound network call in the trace: ${inPatch.map((s) => s.name).join(', ')}`,
    );
  });
});
