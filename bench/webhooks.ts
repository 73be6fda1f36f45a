// Bench: outbound webhooks end to end — outbox events fanned out by the relay workflow into
// delivery workflows, signed POSTs to local receivers in a child process — against a same-run
// baseline of one workflow + one POST activity per delivery on the same Temporal dev server
// (bench/harness/webhookBaselineWorkflow.ts). Targets and figures: bench/README.md, docs/webhooks.md.

import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pLimit from 'p-limit';
import { setTimeout as sleep } from 'node:timers/promises';
import { diff, postgresCpuGroup, snapshot } from './harness/proc';
import type { Cleanups } from './harness/cleanups';
import { resetStores, setBenchEnvironment } from './harness/database';
import { benchFlags } from './harness/options';
import { step } from './harness/format';
import { runBench } from './harness/stack';
import { reserveTemporal, startBenchTemporal } from './harness/temporal';
import { startServer } from './harness/servers';
import type { Received } from './webhooks/receiver';
import { BURST_TARGET, PACED_P99_TARGET_MS, pct, report } from './webhooks/figures';
import type { BaselineDelivery } from './harness/webhookBaselineWorkflow';

const opt = benchFlags(
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

const DATABASE_URL = process.env.BENCH_WH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_wh';
const REDIS_URL = process.env.BENCH_WH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';

/** A request the receivers read, and at which of them. */
export type Receipt = Received & { endpoint: number };
export type Bench = Awaited<ReturnType<typeof setUp>>;
export type Baseline = Awaited<ReturnType<typeof measureBaseline>>;
export type Run = Awaited<ReturnType<typeof run>>;

// Temporal, the stores, a workspace with opt.endpoints endpoints (the create operation) pointed at the receivers, the worker
// in this process with the relay workflow running, and one warm-up event delivered to every endpoint.
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
  const ports = await server.call<number[]>('ports');
  const count = () => server.call<number>('count');
  const endpoints = [];
  for (const port of ports) endpoints.push(await webhookEndpoint(workspace.id, `http://127.0.0.1:${port}/hooks`, EVENT_TYPES));
  const secrets = endpoints.map((e) => e.secret);
  await server.call('secrets', secrets);
  step(`${opt.endpoints} endpoints (create operation) → receivers on 127.0.0.1:${ports.join(', ')} in pid ${server.pid}`);

  const { worker, connection } = await createWorker();
  const running = worker.run();
  const client = await temporalClient();
  await ensureWebhookRelay(client);
  const relay = client.workflow.getHandle(WEBHOOK_RELAY.id());
  const stopWorker = async () => {
    await relay.cancel().catch(() => undefined);
    await relay.result().catch(() => undefined);
    worker.shutdown();
    await running;
    await connection.close();
    await closeTemporalClient();
  };
  cleanups.push(() => stopWorker().catch((err: Error) => console.error(`stopping the worker: ${err.message}`)));
  step(`worker in this process (pid ${process.pid}), task queue ${config.temporalTaskQueue}; relay workflow ${relay.workflowId}`);

  // Warm-up: one event through every path (bundle, connections, JIT) before the clock starts.
  const warm = await emitEvent(db(), { workspaceId: workspace.id, projectId: project.id, type: 'post.updated', data: { warmup: true } });
  for (const deadline = Date.now() + 60_000; (await count()) < opt.endpoints; await sleep(50))
    if (Date.now() > deadline) throw new Error('warm-up event not delivered within 60 s');
  step(`warm-up event ${warm} delivered to all ${opt.endpoints}`);
  /** The receipts once there are `n` (or the timeout passed). */
  const reach = async (n: number) => {
    for (const deadline = Date.now() + opt.timeout * 1000; (await count()) < n && Date.now() < deadline;) await sleep(100);
    return server.call<Receipt[]>('receipts');
  };
  const receivers = { pid: server.pid, ports, count };
  return { opt, temporal, workspaceId: workspace.id, projectId: project.id, endpoints, receivers, reach, client, warm };
}

// The baseline, same dev server, the service worker's settings (workers/worker.ts workerTuning), before the service's burst:
// one workflow per delivery, its one regular activity POSTs the signed request to the same receivers.
async function measureBaseline(b: Bench) {
  const { NativeConnection, Worker } = await import('@temporalio/worker');
  const { signatureHeader, SIGNATURE_HEADER } = await import('../lib/webhooks/signature');
  const { config } = await import('../lib/config');
  const { workerTuning } = await import('../workers/worker');
  const { baselineWebhookWorkflow } = await import('./harness/webhookBaselineWorkflow');
  const connection = await NativeConnection.connect({ address: b.temporal.address });
  const taskQueue = 'webhook-bench-baseline';
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue,
    workflowsPath: path.join(import.meta.dirname, 'harness', 'webhookBaselineWorkflow.ts'),
    activities: {
      async postBaselineWebhook(d: BaselineDelivery) {
        const res = await fetch(d.url, { method: 'POST', body: d.body, headers: d.headers, redirect: 'manual' });
        await res.arrayBuffer();
        if (res.status < 200 || res.status > 299) throw new Error(`HTTP ${res.status}`);
      },
    },
    ...workerTuning(),
  });
  const running = worker.run();
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
      const signature = signatureHeader([b.endpoints[ep]!.secret], Math.floor(Date.now() / 1000), body);
      const headers = { 'Content-Type': 'application/json', [SIGNATURE_HEADER]: signature, 'Webhook-Id': id };
      startedAt.set(`${id}/${ep}`, Date.now());
      const args: [BaselineDelivery] = [{ url: `http://127.0.0.1:${b.receivers.ports[ep]}/hooks`, body, headers }];
      await b.client.workflow.start(baselineWebhookWorkflow, { taskQueue, workflowId: `baseline-${id}-${ep}`, args });
    },
  );
  const got = (await b.reach(before + n)).filter((x) => x.eventId.startsWith('evt_baseline_'));
  const lat = got.map((x) => x.at - (startedAt.get(`${x.eventId}/${x.endpoint}`) ?? NaN)).filter((x) => !Number.isNaN(x));
  const spanSeconds = (Math.max(...got.map((x) => x.at)) - t0) / 1000;
  const latencyMs = { p50: pct(lat, 0.5), p99: pct(lat, 0.99) };
  const baseline = { deliveries: got.length, perSecond: got.length / spanSeconds, spanSeconds, latencyMs };
  worker.shutdown();
  await running;
  await connection.close();
  step(
    `baseline (one workflow + one POST activity per delivery): ${got.length}/${n} in ${spanSeconds.toFixed(2)} s = ${baseline.perSecond.toFixed(0)} deliveries/s, p50 ${latencyMs.p50} ms, p99 ${latencyMs.p99} ms`,
  );
  if (got.length < n) throw new Error(`baseline delivered ${got.length} of ${n} within the timeout`);
  return baseline;
}

/** The service's run: opt.events events emitted (at once or paced), until every delivery arrived or the timeout. */
async function run(b: Bench, baseline: Baseline | null) {
  const { db } = await import('../lib/db');
  const { emitEvent, EVENT_TYPES: types } = await import('../lib/outbox');
  // Who burned the cores: on a shared machine the throughput depends on the neighbours, CPU
  // time per delivery much less. Postgres backends are ours when connected to our database.
  const pgAdmin = new pg.Client({ connectionString: DATABASE_URL });
  await pgAdmin.connect();
  const cpuBefore = snapshot();
  const emitStart = Date.now();
  for (let i = 0; i < opt.events; i++) {
    const due = emitStart + (i * 1000) / opt.rate;
    if (opt.rate > 0 && due > Date.now()) await sleep(due - Date.now());
    // Like the API: each event committed on its own, in its own statement.
    const data = { n: i, post: { id: `post_bench_${i}` } };
    const emitting = emitEvent(db(), { workspaceId: b.workspaceId, projectId: b.projectId, type: types[i % types.length]!, data });
    if (opt.rate > 0 || i % 50 === 49) await emitting;
  }
  const emitSeconds = (Date.now() - emitStart) / 1000;
  step(`emitted ${opt.events} events in ${emitSeconds.toFixed(2)} s`);

  await b.reach(opt.endpoints + (baseline?.deliveries ?? 0) + opt.events * opt.endpoints);
  const cpu = diff(cpuBefore, snapshot(), {
    worker: (p) => p.pid === process.pid,
    temporal: (p) => b.temporal.pids().includes(p.pid),
    receivers: (p) => p.pid === b.receivers.pid,
    postgres: await postgresCpuGroup(pgAdmin, new URL(DATABASE_URL).pathname.slice(1), { backendsOnly: true }),
  });
  await pgAdmin.end();
  await sleep(1_000); // anything delivered twice arrives now
  const measured = (await b.reach(0)).filter((x) => x.eventId !== b.warm && !x.eventId.startsWith('evt_baseline_'));
  return { emitSeconds, cpu, measured };
}

runBench(
  () => 'webhooks',
  async (cleanups) => {
    const cpus = os.cpus();
    const what = `${opt.events} events × ${opt.endpoints} endpoints, ${opt.rate ? `${opt.rate} events/s` : 'one burst'}`;
    console.log(`webhooks bench — ${what}; ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, Node ${process.version}`);
    const bench = await setUp(cleanups);
    const baseline = opt.rate === 0 && !opt['skip-baseline'] ? await measureBaseline(bench) : null;
    await report(bench, await run(bench, baseline), baseline);
  },
);
