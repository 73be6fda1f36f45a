// Bench: outbound webhooks end to end — outbox events fanned out by the relay workflow into one
// delivery workflow per (event, endpoint), signed POSTs to local receivers.
//
// Targets (issue 19): a burst drains at ≥ 0.8× the baseline measured in the same run on the
// same Temporal dev server (one workflow per delivery whose one regular activity POSTs the
// signed request: bench/harness/webhookBaselineWorkflow.ts); paced at 20 events/s, p99
// event-to-receiver ≤ 1 s. In every run: none lost, none duplicated, every signature valid.
//
// Measures deliveries per second and event-to-delivery latency (outbox row committed → the
// receiver has read the whole request), and checks that no (event, endpoint) pair is lost or
// delivered twice and that every signature verifies. Everything is real and local: its own
// Postgres database, its own Temporal dev server, the worker in this process, the receivers in
// a child process (so that their work does not share the worker's event loop).

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { diff, snapshot, type Groups } from './harness/proc';
import { verifyWebhookSignature } from '../sim/webhooks/verifier';
import { Cleanups } from './harness/cleanups';
import { closeStores, resetStores, setBenchEnvironment } from './harness/database';
import { benchFlags } from './harness/options';
import { launch } from '../tooling/launcher';
import { setTimeout as sleep } from 'node:timers/promises';
import { quantile, step } from './harness/format';
import { figures, report } from './webhooks/figures';

/** Burst drain rate of the service over the baseline's, at least. */
export const BURST_TARGET = 0.8;
/** Paced (issue 19: at 20 events/s), event committed → receiver, p99 at most. */
export const PACED_P99_TARGET_MS = 1_000;

// ---------------------------------------------------------------------------------------------
// The receivers (child process): N node:http servers that verify each signature independently
// of the service's signer, answer 204, and report what they saw when asked.

interface Receipt {
  endpoint: number;
  eventId: string;
  receivedAt: number;
  signatureOk: boolean;
}

async function runReceivers(): Promise<void> {
  const secrets: string[] = JSON.parse(process.env.BENCH_RECEIVER_SECRETS ?? '[]');
  const receipts: Receipt[] = [];
  const ports: number[] = [];
  for (let i = 0; i < secrets.length; i++) {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const receivedAt = Date.now();
        const body = Buffer.concat(chunks);
        let eventId = '';
        try {
          eventId = JSON.parse(body.toString('utf8')).id;
        } catch {
          /* counted as unverifiable below */
        }
        receipts.push({
          endpoint: i,
          eventId,
          receivedAt,
          signatureOk: verifyWebhookSignature(body, req.headers['webhook-signature'] as string | undefined, secrets[i]!, Infinity).ok,
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ports.push((server.address() as AddressInfo).port);
  }
  process.send!({ type: 'ready', ports });
  process.on('message', (m: { type: string }) => {
    if (m.type === 'count') process.send!({ type: 'count', n: receipts.length });
    if (m.type === 'report') process.send!({ type: 'report', receipts });
  });
}

// ---------------------------------------------------------------------------------------------
// The bench (parent).

export const opt = benchFlags(
  'webhooks: outbox → relay → delivery workflows → local receivers.',
  {
    events: { default: 1000, min: 1, integer: true, help: 'events emitted' },
    endpoints: { default: 5, min: 1, integer: true, help: 'receivers, each an endpoint subscribed to every event' },
    rate: { default: 0, arg: 'R', help: 'events per second; 0 emits them all at once' },
    timeout: { default: 180, arg: 'S', help: 'give up waiting for deliveries after S seconds' },
    'skip-baseline': { type: 'boolean', help: 'do not measure the baseline before a burst (it runs by default when --rate is 0)' },
    strict: {
      type: 'boolean',
      help: `exit 1 when a target is missed (burst ≥ ${BURST_TARGET}× the baseline; paced p99 ≤ ${PACED_P99_TARGET_MS} ms)`,
    },
  },
  `Environment: BENCH_WH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_wh,
             dropped and recreated), BENCH_WH_REDIS_URL (default redis://127.0.0.1:6379/13, flushed),
             TEMPORAL_CLI_PATH (the temporal binary; otherwise found or built as for npm start).`,
);

const TIMEOUT_MS = opt.timeout * 1000;
const DATABASE_URL = process.env.BENCH_WH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_wh';
const REDIS_URL = process.env.BENCH_WH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';

export const byNumber = (a: number, b: number) => a - b;

export const percentile = (sorted: number[], p: number) => quantile(sorted, p / 100) ?? NaN;

/** The receivers' process, this file run with their secrets, through the launcher. */
async function startReceivers(secrets: string[]) {
  let ports: number[] = [];
  const p = await launch({
    entry: import.meta.filename,
    name: 'receivers',
    env: { BENCH_RECEIVER_SECRETS: JSON.stringify(secrets) },
    ipc: true,
    ready: { message: (m: { type: string; ports: number[] }) => m.type === 'ready' && (ports = m.ports).length > 0 },
    onLine: (line, stream) => (stream === 'stdout' ? process.stdout : process.stderr).write(`${line}\n`),
  });
  const ask = <T>(type: string) =>
    new Promise<T>((resolve) => {
      const on = (m: { type: string }) => {
        if (m.type === type) {
          p.child.off('message', on);
          resolve(m as T);
        }
      };
      p.child.on('message', on);
      p.child.send({ type });
    });
  return { child: p.child, stop: () => p.stop(), ports, ask };
}

async function main() {
  console.log(
    `webhooks bench — ${opt.events} events × ${opt.endpoints} endpoints, ${opt.rate ? `${opt.rate} events/s` : 'one burst'}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`,
  );
  const cleanups = new Cleanups();
  try {
    const bench = await setUp(cleanups);
    const baseline = opt.rate === 0 && !opt['skip-baseline'] ? await measureBaseline(bench) : null;
    report(await figures(bench, await run(bench, baseline), baseline));
  } finally {
    await cleanups.run();
  }
}

export type Bench = Awaited<ReturnType<typeof setUp>>;
export type Baseline = Awaited<ReturnType<typeof measureBaseline>>;

/**
 * Temporal, the stores, a workspace with opt.endpoints endpoints made through the create operation
 * and pointed at the receivers, the worker in this process with the relay workflow running, and
 * one warm-up event delivered to every endpoint.
 */
async function setUp(cleanups: Cleanups) {
  // Temporal first: lib/config reads TEMPORAL_ADDRESS (and everything else) once, at import.
  const { resolveTemporalBinary, startTemporalDevServer } = await import('../tooling/temporalBinary');
  const { freePort } = await import('../tooling/ports');
  const binary = await resolveTemporalBinary({ log: (l) => console.log(`  [temporal] ${l}`) });
  const temporal = await startTemporalDevServer({ binary, port: await freePort(), uiPort: null, dbFile: null, log: () => {} });
  cleanups.push(() => temporal.stop());
  step(`Temporal dev server ${temporal.address} (in memory)`);
  setBenchEnvironment(DATABASE_URL, REDIS_URL, {
    TEMPORAL_ADDRESS: temporal.address,
    // The receivers are local processes: this is the explicit loopback allowance.
    WEBHOOK_ALLOW_LOOPBACK: '1',
    // The worker builds the publishing activities too; nothing here publishes.
    NETWORK_API_URL: process.env.NETWORK_API_URL ?? 'http://127.0.0.1:9',
  });
  await resetStores(DATABASE_URL, REDIS_URL);
  const { db } = await import('../lib/db');
  step(`database ${new URL(DATABASE_URL).pathname.slice(1)} (recreated, migrated), Redis ${REDIS_URL} (flushed)`);

  const { createWorkspace, createProject } = await import('../admin/provision');
  const { emitEvent } = await import('../lib/outbox');
  const { temporalClient, closeTemporalClient, workflowIds } = await import('../lib/temporal/client');
  const { createWorker } = await import('../workers/worker');
  const { config } = await import('../lib/config');

  const workspace = await createWorkspace({ name: 'Webhook bench', plan: 'BUSINESS' });
  const project = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'Bench person', connection: 'connected' });
  const endpoints = await createEndpoints(workspace.id);
  const receivers = await startReceivers(endpoints.map((e) => e.secret));
  cleanups.push(() => receivers.stop());
  for (let i = 0; i < opt.endpoints; i++)
    await db()('webhook_endpoints')
      .where({ id: endpoints[i]!.id })
      .update({ url: `http://127.0.0.1:${receivers.ports[i]}/hooks` });
  step(
    `${opt.endpoints} endpoints (create operation) → receivers on 127.0.0.1:${receivers.ports.join(', ')} in pid ${receivers.child.pid}`,
  );

  const { worker, connection } = await createWorker();
  const running = worker.run();
  const client = await temporalClient();
  const { webhookRelayWorkflow } = await import('../workflows/webhookRelay');
  await client.workflow.start(webhookRelayWorkflow, {
    taskQueue: config.temporalTaskQueue,
    workflowId: workflowIds.webhookRelay(),
    args: [{}],
  });
  cleanups.push(async () => {
    try {
      const relay = client.workflow.getHandle(workflowIds.webhookRelay());
      await relay.cancel().catch(() => undefined);
      await relay.result().catch(() => undefined);
      worker.shutdown();
      await running;
      await connection.close();
      await closeTemporalClient();
      await closeStores();
    } catch (err) {
      console.error(`stopping the worker: ${(err as Error).message}`);
    }
  });
  step(`worker in this process (pid ${process.pid}), task queue ${config.temporalTaskQueue}; relay workflow ${workflowIds.webhookRelay()}`);

  // Warm-up: one event through every path (bundle, connections, JIT) before the clock starts.
  const warm = await emitEvent(db(), { workspaceId: workspace.id, projectId: project.id, type: 'post.updated', data: { warmup: true } });
  const warmDeadline = Date.now() + 60_000;
  while ((await receivers.ask<{ n: number }>('count')).n < opt.endpoints) {
    if (Date.now() > warmDeadline) throw new Error('warm-up event not delivered within 60 s');
    await sleep(50);
  }
  step(`warm-up event ${warm} delivered to all ${opt.endpoints}`);
  return { temporal, workspaceId: workspace.id, projectId: project.id, endpoints, receivers, client, warm };
}

/** opt.endpoints endpoints subscribed to every event, pointed at the receivers once they are up. */
async function createEndpoints(workspaceId: string): Promise<Array<{ id: string; secret: string }>> {
  const { webhookEndpoint } = await import('./harness/seed');
  const { EVENT_TYPES } = await import('../lib/outbox');
  const endpoints = [];
  for (let i = 0; i < opt.endpoints; i++) endpoints.push(await webhookEndpoint(workspaceId, `http://127.0.0.1:9/bench-${i}`, EVENT_TYPES));
  return endpoints;
}

/**
 * The baseline, same dev server, same worker settings, before the service's burst: one workflow
 * per delivery, its one regular activity POSTs the signed request to the same receivers.
 */
async function measureBaseline({ temporal, endpoints, receivers, client }: Bench) {
  const { NativeConnection, Worker } = await import('@temporalio/worker');
  const { signatureHeader, SIGNATURE_HEADER } = await import('../lib/webhooks/signature');
  const { config } = await import('../lib/config');
  const baseConnection = await NativeConnection.connect({ address: temporal.address });
  const baseQueue = 'webhook-bench-baseline';
  const baseWorker = await Worker.create({
    connection: baseConnection,
    namespace: config.temporalNamespace,
    taskQueue: baseQueue,
    workflowsPath: path.join(import.meta.dirname, 'harness', 'webhookBaselineWorkflow.ts'),
    activities: {
      async postBaselineWebhook(d: { url: string; body: string; headers: Record<string, string> }) {
        const res = await fetch(d.url, { method: 'POST', body: d.body, headers: d.headers, redirect: 'manual' });
        await res.arrayBuffer();
        if (res.status < 200 || res.status > 299) throw new Error(`HTTP ${res.status}`);
      },
    },
    maxConcurrentActivityTaskExecutions: config.worker.activityConcurrency,
    maxConcurrentWorkflowTaskExecutions: config.worker.workflowConcurrency,
  });
  const baseRunning = baseWorker.run();
  const { baselineWebhookWorkflow } = await import('./harness/webhookBaselineWorkflow');
  const pLimit = (await import('p-limit')).default;
  const before = (await receivers.ask<{ n: number }>('count')).n;
  const n = opt.events * opt.endpoints;
  const startedAt = new Map<string, number>();
  const t0 = Date.now();
  await pLimit(64).map(
    Array.from({ length: n }, (_, i) => i),
    async (i) => {
      const ep = i % opt.endpoints;
      const id = `evt_baseline_${Math.floor(i / opt.endpoints)}`;
      const body = JSON.stringify({ id, type: 'post.updated', createdAt: new Date().toISOString(), data: { n: i } });
      const headers = {
        'Content-Type': 'application/json',
        [SIGNATURE_HEADER]: signatureHeader([endpoints[ep]!.secret], Math.floor(Date.now() / 1000), body),
        'Webhook-Id': id,
      };
      startedAt.set(`${id}/${ep}`, Date.now());
      await client.workflow.start(baselineWebhookWorkflow, {
        taskQueue: baseQueue,
        workflowId: `baseline-${id}-${ep}`,
        args: [{ url: `http://127.0.0.1:${receivers.ports[ep]}/hooks`, body, headers }],
      });
    },
  );
  const deadline = Date.now() + TIMEOUT_MS;
  while ((await receivers.ask<{ n: number }>('count')).n < before + n && Date.now() < deadline) await sleep(100);
  const got = (await receivers.ask<{ receipts: Receipt[] }>('report')).receipts.filter((x) => x.eventId.startsWith('evt_baseline_'));
  const lat = got
    .map((x) => x.receivedAt - (startedAt.get(`${x.eventId}/${x.endpoint}`) ?? NaN))
    .filter((x) => !Number.isNaN(x))
    .sort(byNumber);
  const span = (Math.max(...got.map((x) => x.receivedAt)) - t0) / 1000;
  const baseline = {
    deliveries: got.length,
    perSecond: got.length / span,
    spanSeconds: span,
    latencyMs: { p50: percentile(lat, 50), p99: percentile(lat, 99) },
  };
  baseWorker.shutdown();
  await baseRunning;
  await baseConnection.close();
  step(
    `baseline (one workflow + one POST activity per delivery): ${got.length}/${n} in ${span.toFixed(2)} s = ${baseline.perSecond.toFixed(0)} deliveries/s, p50 ${baseline.latencyMs.p50} ms, p99 ${baseline.latencyMs.p99} ms`,
  );
  if (got.length < n) throw new Error(`baseline delivered ${got.length} of ${n} within the timeout`);
  return baseline;
}

/** The service's run: opt.events events emitted (at once or paced), until every delivery arrived or the timeout. */
export async function run(b: Bench, baseline: Baseline | null) {
  const { db } = await import('../lib/db');
  const { emitEvent, EVENT_TYPES: types } = await import('../lib/outbox');
  // Who burned the cores: on a shared machine the throughput depends on the neighbours, CPU
  // time per delivery much less. Postgres backends are ours when connected to our database.
  const pgAdmin = new pg.Client({ connectionString: DATABASE_URL });
  await pgAdmin.connect();
  const dbName = new URL(DATABASE_URL).pathname.slice(1);
  const groups = async (): Promise<Groups> => {
    const { rows } = await pgAdmin.query<{ pid: number; datname: string | null }>('select pid, datname from pg_stat_activity');
    const ours = new Set(rows.filter((r) => r.datname === dbName).map((r) => r.pid));
    return {
      worker: (p) => p.pid === process.pid,
      temporal: (p) => p.pid === b.temporal.child.pid,
      receivers: (p) => p.pid === b.receivers.child.pid,
      postgres: (p) => ours.has(p.pid),
    };
  };
  const cpuBefore = snapshot();

  const emitStart = Date.now();
  for (let i = 0; i < opt.events; i++) {
    if (opt.rate > 0) {
      const due = emitStart + (i * 1000) / opt.rate;
      if (due > Date.now()) await sleep(due - Date.now());
    }
    // Like the API: each event committed on its own, in its own statement.
    const emitting = emitEvent(db(), {
      workspaceId: b.workspaceId,
      projectId: b.projectId,
      type: types[i % types.length]!,
      data: { n: i, post: { id: `post_bench_${i}` } },
    });
    if (opt.rate > 0) await emitting;
    else if (i % 50 === 49) await emitting;
  }
  const emitEnd = Date.now();
  step(`emitted ${opt.events} events in ${((emitEnd - emitStart) / 1000).toFixed(2)} s`);

  const deadline = Date.now() + TIMEOUT_MS;
  while ((await b.receivers.ask<{ n: number }>('count')).n - opt.endpoints - (baseline?.deliveries ?? 0) < opt.events * opt.endpoints) {
    if (Date.now() > deadline) break;
    await sleep(100);
  }
  const cpu = diff(cpuBefore, snapshot(), await groups());
  await pgAdmin.end();
  await sleep(1_000); // anything delivered twice arrives now
  const { receipts } = await b.receivers.ask<{ receipts: Receipt[] }>('report');
  const measured = receipts.filter((x) => x.eventId !== b.warm && !x.eventId.startsWith('evt_baseline_'));
  return { emitSeconds: (emitEnd - emitStart) / 1000, cpu, measured };
}

if (process.env.BENCH_RECEIVER_SECRETS) {
  runReceivers().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (err) => {
      console.error(err instanceof Error ? err.stack : err);
      process.exit(1);
    },
  );
}
