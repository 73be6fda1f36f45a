// Bench: outbound webhooks end to end (outbox → relay workflow → endpoint workflows → signed POSTs to receivers in a child process) beside
// a same-run baseline of one workflow + one POST activity per delivery on the same Temporal dev server
// (bench/harness/webhookBaselineWorkflow.ts). Targets and figures: bench/README.md, docs/webhooks.md.

import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pLimit from 'p-limit';
import { setTimeout as sleep } from 'node:timers/promises';
import { diff, machineInfo, postgresCpuGroup, snapshot } from './harness/proc';
import type { Cleanups } from './harness/cleanups';
import { resetStores, setBenchEnvironment } from './harness/database';
import { benchFlags } from './harness/options';
import { mapValues, quantile, step, writeResults } from './harness/format';
import { runBench } from './harness/stack';
import { reserveTemporal, startBenchTemporal } from './harness/temporal';
import { startServer } from './harness/servers';
import type { Received } from './webhooks/receiver';
import type { BaselineDelivery } from './harness/webhookBaselineWorkflow';

/** Burst drain rate of the service over the baseline's, at least. */
const BURST_TARGET = 0.8;
/** Paced (issue 19: at 20 events/s), event committed → receiver, p99 at most. */
const PACED_P99_TARGET_MS = 1_000;

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
  `Environment: BENCH_WH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_wh, recreated),
BENCH_WH_REDIS_URL (default redis://127.0.0.1:6379/13, flushed), TEMPORAL_CLI_PATH (else found or built as for npm start).`,
);

const DATABASE_URL = process.env.BENCH_WH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_wh';
const REDIS_URL = process.env.BENCH_WH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';

/** A request the receivers read, and at which of them. */
export type Receipt = Received & { endpoint: number };
type Bench = Awaited<ReturnType<typeof setUp>>;
type Baseline = Awaited<ReturnType<typeof measureBaseline>>;

/** The p-quantile (0..1) of xs, NaN for none. */
const pct = (xs: number[], p: number) => quantile(xs, p) ?? NaN;
/** p50, p99 and max of xs, in ms. */
const spread = (xs: number[]) => ({ p50: pct(xs, 0.5), p99: pct(xs, 0.99), max: pct(xs, 1) });

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
    // The receivers are local processes: the explicit loopback allowance.
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
  // The receivers: one per endpoint, in a child process so that their work does not share the worker's event loop.
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
    await Promise.all([connection.close(), closeTemporalClient()]);
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
  return { temporal, workspaceId: workspace.id, projectId: project.id, endpoints, receivers, reach, client, warm };
}

// The baseline, same dev server, the service worker's settings (bench/harness/baselineWorker.ts), before the service's burst:
// one workflow per delivery, its one regular activity POSTs the signed request to the same receivers.
async function measureBaseline(b: Bench) {
  const { signatureHeader, SIGNATURE_HEADER } = await import('../lib/webhooks/signature');
  const { createBaselineWorker } = await import('./harness/baselineWorker');
  const { baselineWebhookWorkflow } = await import('./harness/webhookBaselineWorkflow');
  const taskQueue = 'webhook-bench-baseline';
  const activities = {
    async postBaselineWebhook(d: BaselineDelivery) {
      const res = await fetch(d.url, { method: 'POST', body: d.body, headers: d.headers, redirect: 'manual' });
      await res.arrayBuffer();
      if (res.status < 200 || res.status > 299) throw new Error(`HTTP ${res.status}`);
    },
  };
  const workflowsUrl = new URL('./harness/webhookBaselineWorkflow.ts', import.meta.url);
  const { worker, connection } = await createBaselineWorker({ taskQueue, workflowsUrl, activities });
  const running = worker.run();
  const before = await b.receivers.count();
  const n = opt.events * opt.endpoints;
  const startedAt = new Map<string, number>();
  const t0 = Date.now();
  await pLimit(64).map([...Array(n).keys()], async (i) => {
    const ep = i % opt.endpoints;
    const id = `evt_baseline_${Math.floor(i / opt.endpoints)}`;
    const body = JSON.stringify({ id, type: 'post.updated', createdAt: new Date().toISOString(), data: { n: i } });
    const signature = signatureHeader([b.endpoints[ep]!.secret], Math.floor(Date.now() / 1000), body);
    const headers = { 'Content-Type': 'application/json', [SIGNATURE_HEADER]: signature, 'Webhook-Id': id };
    startedAt.set(`${id}/${ep}`, Date.now());
    const args: [BaselineDelivery] = [{ url: `http://127.0.0.1:${b.receivers.ports[ep]}/hooks`, body, headers }];
    await b.client.workflow.start(baselineWebhookWorkflow, { taskQueue, workflowId: `baseline-${id}-${ep}`, args });
  });
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

type Delivery = { event_id: string; endpoint_id: string; created_at: Date; delivery_at: Date; started_at: Date };

// What the run's receipts and rows say (deliveries, losses, duplicates, latencies, where the time went), on stdout and in
// bench/results/webhooks.json; the exit code says whether a check or (--strict) a target failed.
async function report(b: Bench, { emitSeconds, cpu, measured }: Awaited<ReturnType<typeof run>>, baseline: Baseline | null) {
  const { db } = await import('../lib/db');
  const { workspaceId, warm } = b;
  const expected = opt.events * opt.endpoints;
  const events = await db()('outbox_events').where({ workspace_id: workspaceId }).whereNot({ id: warm }).select('id', 'created_at');
  const createdAt = new Map(events.map((e: { id: string; created_at: Date }) => [e.id, e.created_at.getTime()]));
  const receivedAt = new Map<string, number>();
  let [duplicates, badSignatures] = [0, 0];
  const latencies: number[] = [];
  for (const x of measured) {
    const key = `${x.eventId}/${x.endpoint}`;
    if (receivedAt.has(key)) duplicates++;
    else {
      if (!x.signatureOk) badSignatures++;
      const c = createdAt.get(x.eventId);
      if (c !== undefined) latencies.push(x.at - c);
    }
    receivedAt.set(key, x.at);
  }
  const delivered = receivedAt.size;
  // Where the time goes, per delivery: commit → the relay wrote the delivery row (claim and fan-out), → the first attempt began (workflow
  // start and dispatch), → the receiver read it.
  const stages: Delivery[] = await db()('webhook_deliveries as d')
    .join('webhook_delivery_attempts as a', function () {
      this.on('a.delivery_id', '=', 'd.id').andOnVal('a.attempt', '=', 1);
    })
    .join('outbox_events as e', 'e.id', 'd.event_id')
    .where('d.workspace_id', workspaceId)
    .whereNot('d.event_id', warm)
    .select('e.id as event_id', 'd.endpoint_id', 'e.created_at', 'd.created_at as delivery_at', 'a.started_at');
  const endpointIndex = new Map(b.endpoints.map((e, i) => [e.id, i]));
  const receivedOf = (x: Delivery) => receivedAt.get(`${x.event_id}/${endpointIndex.get(x.endpoint_id)}`);
  const commitToRow = spread(stages.map((x) => x.delivery_at.getTime() - x.created_at.getTime()));
  const attemptToReceipt = spread(stages.filter((x) => receivedOf(x) !== undefined).map((x) => receivedOf(x)! - x.started_at.getTime()));
  const startToAttempt = spread(stages.map((x) => x.started_at.getTime() - x.delivery_at.getTime()));
  const breakdown = { relayMs: commitToRow.p50, startToAttemptMs: startToAttempt.p50, attemptToReceiptMs: attemptToReceipt.p50 };
  // The same stages finer, from the endpoint workflows' histories.
  const fine = await workflowStages(b, stages)
    .then((s) => ({ 'commit → relay row': commitToRow, ...s, 'attempt → receiver': attemptToReceipt }))
    .catch((err: Error) => {
      console.log(`  (stage breakdown from the histories unavailable: ${err.message})`);
      return {};
    });
  const statuses: Array<{ status: string; n: string | number }> = await db()('webhook_deliveries')
    .where({ workspace_id: workspaceId })
    .whereNot({ event_id: warm })
    .groupBy('status')
    .select('status')
    .count({ n: '*' });
  const spanS = (Math.max(...measured.map((x) => x.at)) - Math.min(...createdAt.values())) / 1000;
  const rate = delivered / spanS;
  const c = cpu && mapValues(cpu.cpuMs, (v) => Math.round((v / delivered) * 100) / 100);
  const ratio = baseline ? rate / baseline.perSecond : null;
  const lat = (p: number) => pct(latencies, p);
  const [p50, p90, p99, max] = [lat(0.5), lat(0.9), lat(0.99), lat(1)];
  const result = {
    at: new Date().toISOString(),
    machine: machineInfo(),
    events: opt.events,
    endpoints: opt.endpoints,
    rate: opt.rate || 'burst',
    expected,
    delivered,
    lost: expected - delivered,
    duplicates,
    badSignatures,
    deliveryRows: Object.fromEntries(statuses.map((s) => [s.status, Number(s.n)])),
    emitSeconds,
    spanSeconds: spanS,
    deliveredPerSecond: rate,
    cpuMsPerDelivery: c,
    machineBusy: cpu ? Math.round(cpu.machineBusy * 100) / 100 : null,
    latencyBreakdownP50Ms: breakdown,
    stagesMs: fine,
    baseline,
    ratioToBaseline: ratio,
    latencyMs: { p50, p90, p99, max, min: lat(0) },
  };

  console.log(`
  delivered        ${delivered} / ${expected}  (lost ${result.lost}, duplicates ${duplicates}, bad signatures ${badSignatures})
  delivery rows    ${JSON.stringify(result.deliveryRows)}
  throughput       ${rate.toFixed(0)} deliveries/s  (first event → last delivery ${spanS.toFixed(2)} s; emission took ${emitSeconds.toFixed(2)} s)
  latency          p50 ${p50} ms · p90 ${p90} ms · p99 ${p99} ms · max ${max} ms  (event committed → receiver read the request)
  latency p50 by stage  relay ${breakdown.relayMs} ms → workflow start and dispatch ${breakdown.startToAttemptMs} ms → POST ${breakdown.attemptToReceiptMs} ms`);
  const ms = (x: number) => `${String(x).padStart(6)} ms`;
  for (const [name, v] of Object.entries(fine))
    console.log(`    ${name.padEnd(28)} p50 ${ms(v.p50)} · p99 ${ms(v.p99)} · max ${ms(v.max)}`);
  const cores = os.cpus().length;
  if (c)
    console.log(`  CPU per delivery worker ${c.worker} ms · Temporal ${c.temporal} ms · Postgres ${c.postgres} ms · receivers ${c.receivers} ms · other processes ${c.other} ms (machine ${Math.round((result.machineBusy ?? 0) * 100)}% busy)
  capacity bound   ≈ ${Math.round((cores * 1000) / ((c.worker ?? 0) + (c.temporal ?? 0) + (c.postgres ?? 0)))} deliveries/s if worker, Temporal and Postgres had the ${cores} cores to themselves`);
  const misses: string[] = [];
  const target = (name: string, ok: boolean) => (ok ? 'met' : (misses.push(name), 'MISSED'));
  if (baseline && ratio !== null)
    console.log(
      `  vs baseline      ${rate.toFixed(0)} / ${baseline.perSecond.toFixed(0)} deliveries/s = ${ratio.toFixed(2)}× (target ≥ ${BURST_TARGET}×: ${target('burst ratio', ratio >= BURST_TARGET)}); baseline p99 ${baseline.latencyMs.p99} ms`,
    );
  if (result.rate !== 'burst')
    console.log(
      `  paced target     p99 ${p99} ms (target ≤ ${PACED_P99_TARGET_MS} ms at 20 events/s; this run ${result.rate}/s: ${target('paced p99', p99 <= PACED_P99_TARGET_MS)})`,
    );
  console.log(`  written to ${path.relative(process.cwd(), writeResults('webhooks', result))}`);
  if (result.lost || duplicates || badSignatures) process.exitCode = 1;
  if (opt.strict && misses.length) {
    console.log(`  --strict: missed ${misses.join(', ')}`);
    process.exitCode = 1;
  }
}

// Per-delivery stage times from the endpoint workflows' histories (every run of each): the row written → the relay's signal recorded by the
// server → the workflow task that took it started on the worker → the pass began the attempt. A row picked up by a pass already running has
// no signal or task of its own: those stages count as 0 for it.
async function workflowStages({ client, endpoints }: Bench, deliveries: Delivery[]) {
  const { tsToMs } = await import('@temporalio/common/lib/time');
  const { workflowIds } = await import('../lib/temporal/client');
  // temporal.api.enums.v1.EventType: workflow execution started 1, workflow task started 6, signaled 26.
  const history = new Map<string, Array<{ type: number; at: number }>>();
  for (const { id } of endpoints) {
    const events: Array<{ type: number; at: number }> = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowIds.webhookEndpoint(id)}'` }))
      for (const e of (await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ?? [])
        events.push({ type: Number(e.eventType), at: tsToMs(e.eventTime) });
    history.set(id, events);
    events.sort((x, y) => x.at - y.at);
  }
  /** When the first event of `types` in `endpoint`'s histories at or after `from` came, no later than `attempt`. */
  const first = (endpoint: string, types: number[], from: number, attempt: number) =>
    Math.min(history.get(endpoint)?.find((e) => types.includes(e.type) && e.at >= from)?.at ?? attempt, attempt);
  const [rowToSignal, signalToTask, taskToAttempt]: number[][] = [[], [], []];
  for (const d of deliveries) {
    const [row, attempt] = [d.delivery_at.getTime(), d.started_at.getTime()];
    const signal = first(d.endpoint_id, [1, 26], row, attempt);
    const task = first(d.endpoint_id, [6], signal, attempt);
    rowToSignal.push(signal - row);
    signalToTask.push(task - signal);
    taskToAttempt.push(attempt - task);
  }
  return {
    'row → signal recorded': spread(rowToSignal),
    'signal → workflow task': spread(signalToTask),
    'workflow task → attempt': spread(taskToAttempt),
  };
}

runBench(
  () => 'webhooks',
  async (cleanups) => {
    const { cpus, cpuModel } = machineInfo();
    const what = `${opt.events} events × ${opt.endpoints} endpoints, ${opt.rate ? `${opt.rate} events/s` : 'one burst'}`;
    console.log(`webhooks bench — ${what}; ${cpus} × ${cpuModel}, Node ${process.version}`);
    const bench = await setUp(cleanups);
    const baseline = opt.rate === 0 && !opt['skip-baseline'] ? await measureBaseline(bench) : null;
    await report(bench, await run(bench, baseline), baseline);
  },
);
