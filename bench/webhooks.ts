// Bench: outbound webhooks end to end — outbox events fanned out by the relay workflow into one
// delivery workflow per (event, endpoint), signed POSTs to local receivers.
//
//   npm run bench -- webhooks                      1,000 events × 5 receivers, in one burst
//   npm run bench -- webhooks --rate 10            the same events paced at 10/s (50 deliveries/s)
//   npm run bench -- webhooks --help               every option
//   npm run bench -- webhooks --strict             exit non-zero when a target is missed
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

import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { diff, snapshot, type Groups } from './harness/proc';
import { verifyWebhookSignature } from './harness/webhookSignature';
import { Cleanups } from './harness/cleanups';
import { closeStores, resetStores } from './harness/database';
import { benchOptions } from './harness/options';

const RECEIVER_CHILD = '--receivers-child';
/** Burst drain rate of the service over the baseline's, at least. */
const BURST_TARGET = 0.8;
/** Paced (issue 19: at 20 events/s), event committed → receiver, p99 at most. */
const PACED_P99_TARGET_MS = 1_000;

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
          signatureOk: verifyWebhookSignature(body, req.headers['webhook-signature'] as string | undefined, secrets[i]!),
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

const opt = benchOptions(
  {
    events: { type: 'string', default: '1000' },
    endpoints: { type: 'string', default: '5' },
    rate: { type: 'string', default: '0' },
    timeout: { type: 'string', default: '180' },
    'skip-baseline': { type: 'boolean', default: false },
    strict: { type: 'boolean', default: false },
    'receivers-child': { type: 'boolean', default: false },
  },
  `webhooks: outbox → relay → delivery workflows → local receivers.

Options:
  --events N      events emitted (default 1000)
  --endpoints N   receivers, each an endpoint subscribed to every event (default 5)
  --rate R        events per second; 0 emits them all at once (default 0)
  --timeout S     give up waiting for deliveries after S seconds (default 180)
  --skip-baseline do not measure the baseline before a burst (it runs by default when --rate is 0)
  --strict        exit 1 when a target is missed (burst ≥ ${BURST_TARGET}× the baseline; paced p99 ≤ ${PACED_P99_TARGET_MS} ms)

Environment: BENCH_WH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_wh,
             dropped and recreated), BENCH_WH_REDIS_URL (default redis://127.0.0.1:6379/13, flushed),
             TEMPORAL_CLI_PATH (the temporal binary; otherwise found or built as for npm start).`,
);

const EVENTS = Number(opt.events);
const ENDPOINTS = Number(opt.endpoints);
const RATE = Number(opt.rate);
const TIMEOUT_MS = Number(opt.timeout) * 1000;
const DATABASE_URL = process.env.BENCH_WH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_wh';
const REDIS_URL = process.env.BENCH_WH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';
const step = (text: string) => console.log(`• ${text}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const byNumber = (a: number, b: number) => a - b;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function startReceivers(secrets: string[]): Promise<{ child: ChildProcess; ports: number[]; ask<T>(type: string): Promise<T> }> {
  const child = fork(import.meta.filename, [RECEIVER_CHILD], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_RECEIVER_SECRETS: JSON.stringify(secrets) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = <T>(type: string) =>
    new Promise<T>((resolve) => {
      const on = (m: { type: string }) => {
        if (m.type === type) {
          child.off('message', on);
          resolve(m as T);
        }
      };
      child.on('message', on);
      child.send({ type });
    });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { type: string; ports: number[] }) => resolve({ child, ports: m.ports, ask }));
    child.once('exit', (code) => reject(new Error(`receivers exited (${code})`)));
  });
}

async function main() {
  if (!Number.isInteger(EVENTS) || EVENTS < 1 || !Number.isInteger(ENDPOINTS) || ENDPOINTS < 1 || !(RATE >= 0))
    throw new Error('--events and --endpoints must be positive integers, --rate ≥ 0');
  console.log(
    `webhooks bench — ${EVENTS} events × ${ENDPOINTS} endpoints, ${RATE ? `${RATE} events/s` : 'one burst'}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`,
  );
  const cleanups = new Cleanups();
  try {
    const bench = await setUp(cleanups);
    const baseline = RATE === 0 && !opt['skip-baseline'] ? await measureBaseline(bench) : null;
    report(await figures(bench, await run(bench, baseline), baseline));
  } finally {
    await cleanups.run();
  }
}

type Bench = Awaited<ReturnType<typeof setUp>>;
type Baseline = Awaited<ReturnType<typeof measureBaseline>>;

/**
 * Temporal, the stores, a workspace with ENDPOINTS endpoints made through the create operation
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
  Object.assign(process.env, {
    DATABASE_URL,
    REDIS_URL,
    TEMPORAL_ADDRESS: temporal.address,
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    // The receivers are local processes: this is the explicit loopback allowance.
    WEBHOOK_ALLOW_LOOPBACK: '1',
    // The worker builds the publishing activities too; nothing here publishes.
    NETWORK_API_URL: process.env.NETWORK_API_URL ?? 'http://127.0.0.1:9',
  });
  await resetStores(DATABASE_URL, REDIS_URL);
  const { db } = await import('../lib/db');
  step(`database ${new URL(DATABASE_URL).pathname.slice(1)} (recreated, migrated), Redis ${REDIS_URL} (flushed)`);

  const { createWorkspace, createProject } = await import('../ops/provision');
  const { emitEvent } = await import('../lib/outbox');
  const { temporalClient, closeTemporalClient, workflowIds } = await import('../lib/temporal');
  const { createWorker } = await import('../workers/worker');
  const { config } = await import('../lib/config');

  const workspace = await createWorkspace({ name: 'Webhook bench', plan: 'BUSINESS' });
  const project = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'Bench person', connection: 'connected' });
  const endpoints = await createEndpoints(workspace.id);
  const receivers = await startReceivers(endpoints.map((e) => e.secret));
  cleanups.push(async () => receivers.child.kill('SIGTERM'));
  for (let i = 0; i < ENDPOINTS; i++)
    await db()('webhook_endpoints')
      .where({ id: endpoints[i]!.id })
      .update({ url: `http://127.0.0.1:${receivers.ports[i]}/hooks` });
  step(`${ENDPOINTS} endpoints (create operation) → receivers on 127.0.0.1:${receivers.ports.join(', ')} in pid ${receivers.child.pid}`);

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
  while ((await receivers.ask<{ n: number }>('count')).n < ENDPOINTS) {
    if (Date.now() > warmDeadline) throw new Error('warm-up event not delivered within 60 s');
    await sleep(50);
  }
  step(`warm-up event ${warm} delivered to all ${ENDPOINTS}`);
  return { temporal, workspaceId: workspace.id, projectId: project.id, endpoints, receivers, client, warm };
}

/** ENDPOINTS endpoints subscribed to every event, pointed at the receivers once they are up. */
async function createEndpoints(workspaceId: string): Promise<Array<{ id: string; secret: string }>> {
  const { webhookEndpoint } = await import('./harness/seed');
  const { EVENT_TYPES } = await import('../lib/outbox');
  const endpoints = [];
  for (let i = 0; i < ENDPOINTS; i++) endpoints.push(await webhookEndpoint(workspaceId, `http://127.0.0.1:9/bench-${i}`, EVENT_TYPES));
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
  const n = EVENTS * ENDPOINTS;
  const startedAt = new Map<string, number>();
  const t0 = Date.now();
  await pLimit(64).map(
    Array.from({ length: n }, (_, i) => i),
    async (i) => {
      const ep = i % ENDPOINTS;
      const id = `evt_baseline_${Math.floor(i / ENDPOINTS)}`;
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

/** The service's run: EVENTS events emitted (at once or paced), until every delivery arrived or the timeout. */
async function run(b: Bench, baseline: Baseline | null) {
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
  for (let i = 0; i < EVENTS; i++) {
    if (RATE > 0) {
      const due = emitStart + (i * 1000) / RATE;
      if (due > Date.now()) await sleep(due - Date.now());
    }
    // Like the API: each event committed on its own, in its own statement.
    const emitting = emitEvent(db(), {
      workspaceId: b.workspaceId,
      projectId: b.projectId,
      type: types[i % types.length]!,
      data: { n: i, post: { id: `post_bench_${i}` } },
    });
    if (RATE > 0) await emitting;
    else if (i % 50 === 49) await emitting;
  }
  const emitEnd = Date.now();
  step(`emitted ${EVENTS} events in ${((emitEnd - emitStart) / 1000).toFixed(2)} s`);

  const deadline = Date.now() + TIMEOUT_MS;
  while ((await b.receivers.ask<{ n: number }>('count')).n - ENDPOINTS - (baseline?.deliveries ?? 0) < EVENTS * ENDPOINTS) {
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

/** What the run's receipts and rows say: deliveries, losses, duplicates, latencies, where the time went. */
async function figures(b: Bench, { emitSeconds, cpu, measured }: Awaited<ReturnType<typeof run>>, baseline: Baseline | null) {
  const { db } = await import('../lib/db');
  const { workflowIds } = await import('../lib/temporal');
  const { workspaceId, warm } = b;
  const expected = EVENTS * ENDPOINTS;
  const events = await db()('outbox_events').where({ workspace_id: workspaceId }).whereNot({ id: warm }).select('id', 'created_at');
  const createdAt = new Map(events.map((e: { id: string; created_at: Date }) => [e.id, e.created_at.getTime()]));
  const pairs = new Set<string>();
  let duplicates = 0;
  let badSignatures = 0;
  const latencies: number[] = [];
  for (const x of measured) {
    const key = `${x.eventId}/${x.endpoint}`;
    if (pairs.has(key)) {
      duplicates++;
      continue;
    }
    pairs.add(key);
    if (!x.signatureOk) badSignatures++;
    const c = createdAt.get(x.eventId);
    if (c !== undefined) latencies.push(x.receivedAt - c);
  }
  latencies.sort(byNumber);
  // Where the time goes, per delivery: commit → the relay wrote the delivery row (claim and
  // fan-out), → the first attempt began (workflow start and dispatch), → the receiver read it.
  const stages = (await db()('webhook_deliveries as d')
    .join('webhook_delivery_attempts as a', function () {
      this.on('a.delivery_id', '=', 'd.id').andOnVal('a.attempt', '=', 1);
    })
    .join('outbox_events as e', 'e.id', 'd.event_id')
    .where('d.workspace_id', workspaceId)
    .whereNot('d.event_id', warm)
    .select('e.id as event_id', 'd.endpoint_id', 'e.created_at', 'd.created_at as delivery_at', 'a.started_at')) as Array<{
    event_id: string;
    endpoint_id: string;
    created_at: Date;
    delivery_at: Date;
    started_at: Date;
  }>;
  const endpointIndex = new Map(b.endpoints.map((e, i) => [e.id, i]));
  const receivedAt = new Map(measured.map((x) => [`${x.eventId}/${x.endpoint}`, x.receivedAt]));
  const med = (xs: number[]) => percentile(xs.sort(byNumber), 50);
  const breakdown = {
    relayMs: med(stages.map((x) => x.delivery_at.getTime() - x.created_at.getTime())),
    startToAttemptMs: med(stages.map((x) => x.started_at.getTime() - x.delivery_at.getTime())),
    attemptToReceiptMs: med(
      stages
        .map((x) => (receivedAt.get(`${x.event_id}/${endpointIndex.get(x.endpoint_id)}`) ?? NaN) - x.started_at.getTime())
        .filter((x) => !Number.isNaN(x)),
    ),
  };
  // The same stages finer, from the endpoint workflows' histories (every run of each): the row
  // written → the relay's signal recorded by the server → the workflow task that took it
  // started on the worker → the pass began the attempt. A row picked up by a pass that was
  // already running has no signal or task of its own: those stages count as 0 for it.
  const fine: Awaited<ReturnType<typeof workflowStages>> = await workflowStages(
    b.client,
    b.endpoints.map((e) => e.id),
    (id) => workflowIds.webhookEndpoint(id),
    stages.map((x) => ({ ...x, received_at: receivedAt.get(`${x.event_id}/${endpointIndex.get(x.endpoint_id)}`) })),
  ).catch((err: Error) => {
    console.log(`  (stage breakdown from the histories unavailable: ${err.message})`);
    return {};
  });
  const statuses = (await db()('webhook_deliveries')
    .where({ workspace_id: workspaceId })
    .whereNot({ event_id: warm })
    .groupBy('status')
    .select('status')
    .count({ n: '*' })) as Array<{ status: string; n: string | number }>;
  const spanS = (Math.max(...measured.map((x) => x.receivedAt)) - Math.min(...createdAt.values())) / 1000;
  return {
    bench: 'webhooks',
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    events: EVENTS,
    endpoints: ENDPOINTS,
    rate: RATE || 'burst',
    expected,
    delivered: pairs.size,
    lost: expected - pairs.size,
    duplicates,
    badSignatures,
    deliveryRows: Object.fromEntries(statuses.map((s) => [s.status, Number(s.n)])),
    emitSeconds,
    spanSeconds: spanS,
    deliveredPerSecond: pairs.size / spanS,
    cpuMsPerDelivery: cpu
      ? Object.fromEntries(Object.entries(cpu.cpuMs).map(([k, v]) => [k, Math.round((v / pairs.size) * 100) / 100]))
      : null,
    machineBusy: cpu ? Math.round(cpu.machineBusy * 100) / 100 : null,
    latencyBreakdownP50Ms: breakdown,
    stagesMs: fine,
    baseline,
    ratioToBaseline: baseline ? pairs.size / spanS / baseline.perSecond : null,
    latencyMs: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1] ?? NaN,
      min: latencies[0] ?? NaN,
    },
  };
}

/** The figures on stdout and in bench/results/webhooks.json; the exit code says whether a check or (--strict) a target failed. */
function report(result: Awaited<ReturnType<typeof figures>>) {
  const { expected, lost, duplicates, badSignatures, spanSeconds: spanS, latencyBreakdownP50Ms: breakdown, baseline } = result;
  console.log('');
  console.log(
    `  delivered        ${result.delivered} / ${expected}  (lost ${lost}, duplicates ${duplicates}, bad signatures ${badSignatures})`,
  );
  console.log(`  delivery rows    ${JSON.stringify(result.deliveryRows)}`);
  console.log(
    `  throughput       ${result.deliveredPerSecond.toFixed(0)} deliveries/s  (first event → last delivery ${spanS.toFixed(2)} s; emission took ${result.emitSeconds.toFixed(2)} s)`,
  );
  console.log(
    `  latency          p50 ${result.latencyMs.p50} ms · p90 ${result.latencyMs.p90} ms · p99 ${result.latencyMs.p99} ms · max ${result.latencyMs.max} ms  (event committed → receiver read the request)`,
  );
  console.log(
    `  latency p50 by stage  relay ${breakdown.relayMs} ms → workflow start and dispatch ${breakdown.startToAttemptMs} ms → POST ${breakdown.attemptToReceiptMs} ms`,
  );
  for (const [name, v] of Object.entries(result.stagesMs))
    console.log(
      `    ${name.padEnd(28)} p50 ${String(v.p50).padStart(6)} ms · p99 ${String(v.p99).padStart(6)} ms · max ${String(v.max).padStart(6)} ms`,
    );
  if (result.cpuMsPerDelivery) {
    const c = result.cpuMsPerDelivery;
    const own = (c.worker ?? 0) + (c.temporal ?? 0) + (c.postgres ?? 0);
    console.log(
      `  CPU per delivery worker ${c.worker} ms · Temporal ${c.temporal} ms · Postgres ${c.postgres} ms · receivers ${c.receivers} ms · other processes ${c.other} ms (machine ${Math.round((result.machineBusy ?? 0) * 100)}% busy)`,
    );
    console.log(
      `  capacity bound   ≈ ${Math.round((os.cpus().length * 1000) / own)} deliveries/s if worker, Temporal and Postgres had the ${os.cpus().length} cores to themselves`,
    );
  }
  const misses: string[] = [];
  if (baseline && result.ratioToBaseline !== null) {
    const ok = result.ratioToBaseline >= BURST_TARGET;
    if (!ok) misses.push('burst ratio');
    console.log(
      `  vs baseline      ${result.deliveredPerSecond.toFixed(0)} / ${baseline.perSecond.toFixed(0)} deliveries/s = ${result.ratioToBaseline.toFixed(2)}× (target ≥ ${BURST_TARGET}×: ${ok ? 'met' : 'MISSED'}); baseline p99 ${baseline.latencyMs.p99} ms`,
    );
  }
  if (RATE > 0) {
    const ok = result.latencyMs.p99 <= PACED_P99_TARGET_MS;
    if (!ok) misses.push('paced p99');
    console.log(
      `  paced target     p99 ${result.latencyMs.p99} ms (target ≤ ${PACED_P99_TARGET_MS} ms at 20 events/s; this run ${RATE}/s: ${ok ? 'met' : 'MISSED'})`,
    );
  }
  const out = path.join(import.meta.dirname, 'results', 'webhooks.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(result, null, 2));
  console.log(`  written to ${path.relative(process.cwd(), out)}`);
  if (lost || duplicates || badSignatures) process.exitCode = 1;
  if (opt.strict && misses.length) {
    console.log(`  --strict: missed ${misses.join(', ')}`);
    process.exitCode = 1;
  }
}

/**
 * Per-delivery stage times from the endpoint workflows' histories: relay row → signal recorded,
 * signal → workflow task started, task started → attempt started (p50, p99, max in ms).
 */
async function workflowStages(
  client: import('@temporalio/client').Client,
  endpointIds: string[],
  workflowIdOf: (endpointId: string) => string,
  deliveries: Array<{ endpoint_id: string; created_at: Date; delivery_at: Date; started_at: Date; received_at?: number }>,
): Promise<Record<string, { p50: number; p99: number; max: number }>> {
  const { tsToMs } = await import('@temporalio/common/lib/time');
  // temporal.api.enums.v1.EventType values (the proto package's namespace object is not a named ESM export).
  const T = { EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: 1, EVENT_TYPE_WORKFLOW_TASK_STARTED: 6, EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: 26 };
  const signals = new Map<string, number[]>();
  const tasks = new Map<string, number[]>();
  for (const id of endpointIds) {
    const s: number[] = [];
    const t: number[] = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowIdOf(id)}'` })) {
      const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      for (const e of history.events ?? []) {
        if (e.eventType === T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED || e.eventType === T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
          s.push(tsToMs(e.eventTime));
        if (e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_STARTED) t.push(tsToMs(e.eventTime));
      }
    }
    signals.set(id, s.sort(byNumber));
    tasks.set(id, t.sort(byNumber));
  }
  const firstAtOrAfter = (xs: number[], at: number) => xs.find((x) => x >= at);
  const commitToRow: number[] = [];
  const attemptToReceipt: number[] = [];
  const rowToSignal: number[] = [];
  const signalToTask: number[] = [];
  const taskToAttempt: number[] = [];
  for (const d of deliveries) {
    const row = d.delivery_at.getTime();
    const attempt = d.started_at.getTime();
    const signal = Math.min(firstAtOrAfter(signals.get(d.endpoint_id) ?? [], row) ?? attempt, attempt);
    const task = Math.min(firstAtOrAfter(tasks.get(d.endpoint_id) ?? [], signal) ?? attempt, attempt);
    commitToRow.push(row - d.created_at.getTime());
    if (d.received_at !== undefined) attemptToReceipt.push(d.received_at - attempt);
    rowToSignal.push(signal - row);
    signalToTask.push(task - signal);
    taskToAttempt.push(attempt - task);
  }
  const sum = (xs: number[]) => {
    const sorted = xs.sort(byNumber);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN };
  };
  return {
    'commit → relay row': sum(commitToRow),
    'row → signal recorded': sum(rowToSignal),
    'signal → workflow task': sum(signalToTask),
    'workflow task → attempt': sum(taskToAttempt),
    'attempt → receiver': sum(attemptToReceipt),
  };
}

if (process.argv.includes(RECEIVER_CHILD)) {
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
