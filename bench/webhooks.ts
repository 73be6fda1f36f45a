// Bench: outbound webhooks end to end — outbox events fanned out by the relay workflow into
// delivery workflows, signed POSTs to local receivers in a child process — against a same-run
// baseline of one workflow + one POST activity per delivery on the same Temporal dev server
// (bench/harness/webhookBaselineWorkflow.ts). Targets (issue 19): a burst at ≥ 0.8× the
// baseline; paced at 20 events/s, p99 event-to-receiver ≤ 1 s; none lost, none duplicated,
// every signature valid (bench/README.md, docs/webhooks.md).

import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { diff, postgresCpuGroup, snapshot, type Groups } from './harness/proc';
import { Cleanups } from './harness/cleanups';
import { closeStores, resetStores, setBenchEnvironment } from './harness/database';
import { benchFlags } from './harness/options';
import { quantile, step } from './harness/format';
import { reserveTemporal, startBenchTemporal } from './harness/temporal';
import { startServer } from './harness/servers';
import type { Received } from './webhooks/receiver';
import { figures, report } from './webhooks/figures';
import type { BaselineDelivery } from './harness/webhookBaselineWorkflow';

/** Burst drain rate of the service over the baseline's, at least. */
export const BURST_TARGET = 0.8;
/** Paced (issue 19: at 20 events/s), event committed → receiver, p99 at most. */
export const PACED_P99_TARGET_MS = 1_000;

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

/** The p-quantile (0..1) of xs, NaN for none. */
export const pct = (xs: number[], p: number) => quantile(xs, p) ?? NaN;

/** A request the receivers read, and at which of them. */
export type Receipt = Received & { endpoint: number };

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
 * Temporal, the stores, a workspace with opt.endpoints endpoints made through the create
 * operation and pointed at the receivers, the worker in this process with the relay workflow
 * running, and one warm-up event delivered to every endpoint.
 */
async function setUp(cleanups: Cleanups) {
  // Temporal first: lib/config reads TEMPORAL_ADDRESS (and everything else) once, at import.
  const temporal = await startBenchTemporal(await reserveTemporal('dev'), {
    databaseUrl: DATABASE_URL,
    databaseName: 'bench_wh_temporal',
    log: (l) => console.log(`  [temporal] ${l}`),
  });
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
  const { emitEvent, EVENT_TYPES } = await import('../lib/outbox');
  const { temporalClient, closeTemporalClient } = await import('../lib/temporal/client');
  const { ensureWebhookRelay } = await import('../lib/temporal/start/webhookRelay');
  const { WEBHOOK_RELAY } = await import('../lib/temporal/contracts/deliverWebhook');
  const { createWorker } = await import('../workers/worker');
  const { config } = await import('../lib/config');
  const { webhookEndpoint } = await import('./harness/seed');

  const workspace = await createWorkspace({ name: 'Webhook bench', plan: 'BUSINESS' });
  const project = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'Bench person', connection: 'connected' });
  // The receivers in a child process (bench/webhooks/receivers.ts), one per endpoint.
  const server = await startServer('receivers', 'bench/webhooks/receivers.ts', { BENCH_RECEIVERS: String(opt.endpoints) });
  cleanups.push(() => server.stop());
  const receivers = {
    pid: server.pid,
    ports: await server.call<number[]>('ports'),
    count: () => server.call<number>('count'),
    receipts: () => server.call<Receipt[]>('receipts'),
  };
  const endpoints = [];
  for (const port of receivers.ports) endpoints.push(await webhookEndpoint(workspace.id, `http://127.0.0.1:${port}/hooks`, EVENT_TYPES));
  await server.call(
    'secrets',
    endpoints.map((e) => e.secret),
  );
  step(`${opt.endpoints} endpoints (create operation) → receivers on 127.0.0.1:${receivers.ports.join(', ')} in pid ${receivers.pid}`);

  const { worker, connection } = await createWorker();
  const running = worker.run();
  const client = await temporalClient();
  await ensureWebhookRelay(client);
  const relayId = WEBHOOK_RELAY.id();
  cleanups.push(async () => {
    try {
      const relay = client.workflow.getHandle(relayId);
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
  step(`worker in this process (pid ${process.pid}), task queue ${config.temporalTaskQueue}; relay workflow ${relayId}`);

  // Warm-up: one event through every path (bundle, connections, JIT) before the clock starts.
  const warm = await emitEvent(db(), { workspaceId: workspace.id, projectId: project.id, type: 'post.updated', data: { warmup: true } });
  const warmDeadline = Date.now() + 60_000;
  while ((await receivers.count()) < opt.endpoints) {
    if (Date.now() > warmDeadline) throw new Error('warm-up event not delivered within 60 s');
    await sleep(50);
  }
  step(`warm-up event ${warm} delivered to all ${opt.endpoints}`);
  return { temporal, workspaceId: workspace.id, projectId: project.id, endpoints, receivers, client, warm };
}

/** Waits until the receivers have read `n` requests, or the timeout. */
async function receiversReach(b: Bench, n: number) {
  const deadline = Date.now() + TIMEOUT_MS;
  while ((await b.receivers.count()) < n && Date.now() < deadline) await sleep(100);
}

/**
 * The baseline, same dev server, same worker settings, before the service's burst: one workflow
 * per delivery, its one regular activity POSTs the signed request to the same receivers.
 */
async function measureBaseline(b: Bench) {
  const { NativeConnection, Worker } = await import('@temporalio/worker');
  const { signatureHeader, SIGNATURE_HEADER } = await import('../lib/webhooks/signature');
  const { config } = await import('../lib/config');
  const baseConnection = await NativeConnection.connect({ address: b.temporal.address });
  const baseQueue = 'webhook-bench-baseline';
  const baseWorker = await Worker.create({
    connection: baseConnection,
    namespace: config.temporalNamespace,
    taskQueue: baseQueue,
    workflowsPath: path.join(import.meta.dirname, 'harness', 'webhookBaselineWorkflow.ts'),
    activities: {
      async postBaselineWebhook(d: BaselineDelivery) {
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
  const before = await b.receivers.count();
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
        [SIGNATURE_HEADER]: signatureHeader([b.endpoints[ep]!.secret], Math.floor(Date.now() / 1000), body),
        'Webhook-Id': id,
      };
      startedAt.set(`${id}/${ep}`, Date.now());
      await b.client.workflow.start(baselineWebhookWorkflow, {
        taskQueue: baseQueue,
        workflowId: `baseline-${id}-${ep}`,
        args: [{ url: `http://127.0.0.1:${b.receivers.ports[ep]}/hooks`, body, headers }],
      });
    },
  );
  await receiversReach(b, before + n);
  const got = (await b.receivers.receipts()).filter((x) => x.eventId.startsWith('evt_baseline_'));
  const lat = got.map((x) => x.at - (startedAt.get(`${x.eventId}/${x.endpoint}`) ?? NaN)).filter((x) => !Number.isNaN(x));
  const span = (Math.max(...got.map((x) => x.at)) - t0) / 1000;
  const baseline = {
    deliveries: got.length,
    perSecond: got.length / span,
    spanSeconds: span,
    latencyMs: { p50: pct(lat, 0.5), p99: pct(lat, 0.99) },
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
  const groups = async (): Promise<Groups> => ({
    worker: (p) => p.pid === process.pid,
    temporal: (p) => b.temporal.pids().includes(p.pid),
    receivers: (p) => p.pid === b.receivers.pid,
    postgres: await postgresCpuGroup(pgAdmin, dbName, { backendsOnly: true }),
  });
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
    if (opt.rate > 0 || i % 50 === 49) await emitting;
  }
  const emitEnd = Date.now();
  step(`emitted ${opt.events} events in ${((emitEnd - emitStart) / 1000).toFixed(2)} s`);

  await receiversReach(b, opt.endpoints + (baseline?.deliveries ?? 0) + opt.events * opt.endpoints);
  const cpu = diff(cpuBefore, snapshot(), await groups());
  await pgAdmin.end();
  await sleep(1_000); // anything delivered twice arrives now
  const receipts = await b.receivers.receipts();
  const measured = receipts.filter((x) => x.eventId !== b.warm && !x.eventId.startsWith('evt_baseline_'));
  return { emitSeconds: (emitEnd - emitStart) / 1000, cpu, measured };
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
