// Bench: scheduled publishing under a thundering herd — 10,000 posts due in the same minute,
// the worker killed (SIGKILL) and restarted while they go out.
//
//   npm run bench -- publishing                 full run (≈ 20-25 min on 2 cores)
//   npm run bench -- publishing --help          every option
//
// Everything is the bench's own: Postgres database content_scheduler_bench_pub (dropped and
// recreated), Redis db 13 (flushed), a Temporal dev server (in memory) and the network
// simulator on free ports. The worker is `workers/main.ts` as a child process, exactly as
// production runs it. See bench/publishing/README.md for what the figures mean.

import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Cleanups } from './harness/cleanups';
import { closeStores, resetStores, setPublishingEnvironment } from './harness/database';
import { diff, machineInfo, snapshot, type CpuSnapshot, type Groups } from './harness/proc';
import { postContent, prng } from './harness/content';
import { printProfile, summarizeProfile, type ProfileSummary } from './harness/profile';
import { compactHistory, timelines, type PostTimeline } from './publishing/history';
import { buildWorkerBundles } from './publishing/bundles';
import { cutProfile } from './publishing/profile';
import { startWorker, type WorkerRun } from './publishing/worker';
import { runBaseline, type BaselineResult } from './publishing/baseline';
import {
  apiCreator,
  createAll,
  inProcessCreator,
  seed,
  startApi,
  type ApiChild,
  type CreateItem,
  type Creator,
} from './publishing/creation';
import { CPUS, lagSummary, median, pct, statsOf, waitForQuiet, type ActivitySample } from './publishing/measure';
import {
  ACTIVITY_CONCURRENCY,
  AIM_DRAIN_VS_BARE_TIMER,
  BASELINE,
  BENCH_DB,
  CLUSTER,
  CONCURRENCY,
  CREATE,
  DATABASE_URL,
  DEADLINE_MS,
  DUMP_HISTORIES,
  HISTORY_SAMPLE,
  KILL,
  KILL_AT,
  KILL_FALLBACK_MS,
  LATE_AFTER_MS,
  MARGIN_MS,
  MAX_CACHED_WORKFLOWS,
  MODE,
  NETWORK_LATENCY_MS,
  PILOT,
  POSTS,
  PROJECTS,
  QUIET_WAIT_MS,
  REDIS_URL,
  RESTART_DELAY_MS,
  RESULTS_DIR,
  ROOT,
  SPREAD_MS,
  STEADY,
  TARGET_DRAIN_VS_TIMER_ACTIVITY,
  TARGET_P99_S,
  TARGET_P99_VS_BASELINE,
  TARGET_PEAK_RSS_MIB,
  TARGET_STEADY_P99_S,
  TASK_QUEUE,
  WORKER_BUNDLE,
  WORKER_COUNT,
  WORKER_HEAP_MIB,
  WORKER_PROFILE,
  WORKFLOW_CONCURRENCY,
  heapLimitMiB,
  opt,
  workerEnv,
} from './publishing/settings';
import { freePort } from '../tooling/ports';
import { resolveTemporalBinary, startTemporalDevServer, type DevServer } from '../tooling/temporalBinary';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const step = (text: string) => console.log(`• ${text}`);
const s1 = (ms: number) => (ms / 1000).toFixed(1);
const f0 = (x: number) => Math.round(x).toLocaleString('en-US');
const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);

async function main() {
  const cleanups = new Cleanups();
  process.once('SIGINT', () => void cleanups.run().then(() => process.exit(130)));
  try {
    const bench = await setUp(cleanups);
    await report(bench, await run(bench));
  } finally {
    await cleanups.run();
    await closeStores();
  }
}

// ── Set up: the environment, the stores, Temporal, the simulator, the customer, the bundles ──

type Bench = Awaited<ReturnType<typeof setUp>>;

async function setUp(cleanups: Cleanups) {
  // lib/config reads the environment once, at import, and the simulator module imports it: every
  // address is chosen and every variable set before the first app module is loaded. The worker
  // and API children inherit the same environment.
  // The machine is measured quiet before the ports are picked: a port free minutes ago may not be.
  const otherAtStart = QUIET_WAIT_MS > 0 ? await waitForQuiet(QUIET_WAIT_MS) : null;
  const { freeClusterPorts, startTemporalCluster, dropClusterDatabases } = await import('../tooling/temporalCluster');
  const clusterPorts = CLUSTER ? await freeClusterPorts() : null;
  const temporalPort = clusterPorts ? clusterPorts.frontend : await freePort();
  const simPort = await freePort();
  setPublishingEnvironment({ databaseUrl: DATABASE_URL, redisUrl: REDIS_URL, temporalPort, taskQueue: TASK_QUEUE, simPort });
  const startedAt = Date.now();
  // The knex pool size every app process uses (lib/db; DB_POOL_MAX where lib/config has it).
  const { config } = await import('../lib/config');
  const DB_POOL = (config as { dbPoolMax?: number }).dbPoolMax ?? 10;
  const machine = machineInfo();
  console.log(`publishing bench — ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  console.log(
    `  ${f0(POSTS)} posts over ${PROJECTS} account(s), due ${SPREAD_MS ? `spread over ${SPREAD_MS / 1000} s from` : 'all at'} one hh:mm:00, PUBLISH_DELAY_SECONDS=0; ` +
      `worker ${KILL ? `SIGKILLed at ${Math.round(KILL_AT * 100)}% published and restarted ${RESTART_DELAY_MS / 1000} s later` : 'never killed (baseline)'}`,
  );
  console.log(
    `  worker: WORKER_ACTIVITY_CONCURRENCY=${ACTIVITY_CONCURRENCY}, WORKER_WORKFLOW_CONCURRENCY=${WORKFLOW_CONCURRENCY}, DB pool max ${DB_POOL} per process (lib/db), workflow cache ${f0(MAX_CACHED_WORKFLOWS)} (WORKER_MAX_CACHED_WORKFLOWS), heap limit ${f0(heapLimitMiB)} MiB${WORKER_HEAP_MIB ? ' (WORKER_HEAP_MIB, --worker-heap)' : " (Node's)"}, workflow bundle ${WORKER_BUNDLE === 'prebuilt' ? 'pre-built by the bench' : 'bundled by each worker at start-up'}; network createPost latency ${NETWORK_LATENCY_MS} ms`,
  );

  step(`database ${BENCH_DB} (reset + migrated), Redis ${REDIS_URL} (flushed)`);
  await resetStores(DATABASE_URL, REDIS_URL);

  // The dev server, or the cluster tier: its four service processes are the "temporal" CPU group.
  let temporalPids: () => number[];
  let temporalDbs: string[] = [];
  const temporalAddress = `127.0.0.1:${temporalPort}`;
  if (CLUSTER) {
    const cluster = await startTemporalCluster({
      databaseUrl: DATABASE_URL,
      databaseName: 'bench_pub_temporal',
      fresh: true,
      ports: clusterPorts!,
      log: () => {},
    });
    cleanups.push(async () => {
      await cluster.stop();
      await dropClusterDatabases(cluster.db);
    });
    temporalPids = () => cluster.pids();
    temporalDbs = [cluster.db.name, cluster.db.visibilityName];
    step(
      `Temporal cluster ${temporalAddress}: frontend, history, matching, worker pids ${cluster.pids().join(', ')} on Postgres; task queue ${TASK_QUEUE}`,
    );
  } else {
    const binary = await resolveTemporalBinary();
    const temporal: DevServer = await startTemporalDevServer({ binary, port: temporalPort, uiPort: null, dbFile: null, log: () => {} });
    cleanups.push(() => temporal.stop());
    temporalPids = () => [temporal.child.pid!];
    step(`Temporal dev server (in memory) ${temporal.address}, pid ${temporal.child.pid}; task queue ${TASK_QUEUE}`);
  }

  const { startNetworkSimulator } = await import('../sim/network/server');
  const simulator = await startNetworkSimulator({ port: simPort });
  cleanups.push(() => simulator.close());
  const sim = simulator.control;
  if (NETWORK_LATENCY_MS) await sim.setLatency({ ms: NETWORK_LATENCY_MS, operation: 'createPost' });
  step(`network simulator in this process at ${simulator.url}`);

  const s = await seed(sim, PROJECTS);
  step(`seeded workspace ${s.workspaceId}: ${PROJECTS} connected personal-brand project(s) + 1 pilot project, write API key`);

  const { Connection, Client } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: temporalAddress });
  cleanups.push(() => connection.close());
  const tclient = new Client({ connection });

  const mon = new pg.Client({ connectionString: DATABASE_URL });
  await mon.connect();
  cleanups.push(() => mon.end());
  /** Commits and rows written so far per database (pg_stat_database), the service's and Temporal's. */
  const dbWrites = async (): Promise<Record<string, { commits: number; rows: number }>> => {
    const { rows } = await mon.query<{ datname: string; commits: string; rows: string }>(
      'select datname, xact_commit as commits, tup_inserted + tup_updated + tup_deleted as rows from pg_stat_database where datname = any($1)',
      [[BENCH_DB, ...temporalDbs]],
    );
    return Object.fromEntries(rows.map((r) => [r.datname, { commits: Number(r.commits), rows: Number(r.rows) }]));
  };

  let bundlePaths: { service: string; baseline: string } | null = null;
  if (WORKER_BUNDLE === 'prebuilt') {
    const t0 = Date.now();
    bundlePaths = await buildWorkerBundles(RESULTS_DIR);
    step(`workflow bundles built in ${s1(Date.now() - t0)} s; the workers load them (--worker-bundle prebuilt)`);
  }
  return {
    startedAt,
    DB_POOL,
    machine,
    cleanups,
    otherAtStart,
    bundlePaths,
    temporalPids,
    temporalDbs,
    sim,
    s,
    connection,
    tclient,
    mon,
    dbWrites,
  };
}

// ── Run: the baselines, the workers, the herd created, the drain ─────────────────────────────

type Fleet = Awaited<ReturnType<typeof startWorkers>>;
type Creation = Awaited<ReturnType<typeof createPosts>>;
type Run = Awaited<ReturnType<typeof run>>;

async function run(b: Bench) {
  const baselines = await runBaselines(b);
  const fleet = await startWorkers(b);
  const creation = await createPosts(b);
  return { baselines, ...fleet, ...creation, ...(await drainPosts(b, { ...fleet, ...creation })) };
}

/** Bare baselines, same Temporal server, same worker settings. */
async function runBaselines(bench: Bench) {
  // ── Bare baselines, same Temporal server, same worker settings ────────────────────────────
  const baselines: BaselineResult[] = [];
  if (BASELINE) {
    for (const kind of ['bare-timer', 'timer+activity'] as const) {
      const b = await runBaseline({
        kind,
        n: POSTS,
        concurrency: CONCURRENCY,
        client: bench.tclient,
        connection: bench.connection,
        mon: bench.mon,
        env: workerEnv(bench.bundlePaths),
        logDir: RESULTS_DIR,
        marginMs: 15_000,
        deadlineMs: DEADLINE_MS,
        log: (line) => console.log(line.startsWith(' ') ? line : `• ${line}`),
        workers: WORKER_COUNT,
      });
      baselines.push(b);
      step(
        `baseline ${kind}: ${f0(b.completed)}/${f0(b.workflows)} done, drain ${b.drainPerS.toFixed(1)} workflows/s (last ${s1(b.lastAfterDueS * 1000)} s after due), lag p50 ${b.lag.p50S.toFixed(1)} s / p99 ${b.lag.p99S.toFixed(1)} s, worker peak RSS ${b.workerPeakRssMiB.toFixed(0)} MiB`,
      );
    }
  }
  return baselines;
}

/** Worker #1, and with --workers N the others, each polling before the next starts. */
async function startWorkers(bench: Bench) {
  // ── Worker #1 ─────────────────────────────────────────────────────────────────────────
  const workers: WorkerRun[] = [];
  const launch = () => {
    const index = workers.length + 1;
    const profDir = path.join(RESULTS_DIR, 'profiles', `publishing${opt.tag ? `-${opt.tag}` : ''}-worker-${index}`);
    if (WORKER_PROFILE) fs.rmSync(profDir, { recursive: true, force: true });
    const w = startWorker(index, workerEnv(bench.bundlePaths), {
      logDir: RESULTS_DIR,
      execArgv: WORKER_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
    });
    workers.push(w);
    bench.cleanups.children.add(w.child);
    return w;
  };
  bench.cleanups.push(async () => {
    for (const w of workers) {
      if (w.exit) continue;
      const t = setTimeout(() => w.child.kill('SIGKILL'), 15_000);
      await w.kill('SIGTERM');
      clearTimeout(t);
    }
  });
  const w1 = launch();
  await w1.waitReady(bench.connection, TASK_QUEUE);
  step(
    `worker #1 pid ${w1.pid} polling after ${s1(w1.readyAt! - w1.startedAt)} s (${WORKER_BUNDLE === 'prebuilt' ? 'pre-built workflow bundle loaded' : 'workflow bundle built at start-up'})`,
  );
  // --workers N: the others run from the start and are never killed; they keep draining
  // while worker #1 is down.
  for (let i = 1; i < WORKER_COUNT; i++) {
    const w = launch();
    await w.waitReady(bench.connection, TASK_QUEUE);
    step(`worker #${w.index} pid ${w.pid} polling after ${s1(w.readyAt! - w.startedAt)} s`);
  }
  return { workers, launch, w1 };
}

/** The pilot, the due minute it gives, then the herd: every post created before it is due. */
async function createPosts(bench: Bench) {
  // ── Creation ──────────────────────────────────────────────────────────────────────────
  let api: ApiChild | null = null;
  let creator: { create: Creator; close(): void };
  if (CREATE === 'api') {
    api = await startApi();
    bench.cleanups.children.add(api.child);
    bench.cleanups.push(() => api!.stop());
    creator = apiCreator(api.port, bench.s.apiKey, CONCURRENCY);
    step(`API process pid ${api.pid} on :${api.port}; posts are created with POST /v1/posts (${CONCURRENCY} in flight)`);
  } else {
    creator = await inProcessCreator(bench.s.workspaceId);
    step(`posts are created in this process through insertPost + afterPostCommitted (${CONCURRENCY} in flight)`);
  }

  const rand = prng(20261122);
  const pilotDue = new Date(Date.now() + 7 * 86_400_000);
  const pilotItems: CreateItem[] = Array.from({ length: PILOT }, () => ({
    projectId: bench.s.pilotProjectId,
    content: postContent(rand),
    scheduledFor: pilotDue,
  }));
  // Tasks waiting in the task queue (workflow + activity; a worker's sticky queue is not counted).
  const longNum = (v: unknown) =>
    v && typeof v === 'object' && 'toNumber' in v ? (v as { toNumber(): number }).toNumber() : Number(v ?? 0);
  const backlog = async () => {
    let total = 0;
    for (const taskQueueType of [1, 2]) {
      const r = await bench.connection.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: TASK_QUEUE, kind: 1 },
        taskQueueType,
        reportStats: true,
      });
      total += longNum(r.stats?.approximateBacklogCount);
    }
    return total;
  };
  /** When the task queue has stayed empty for 2 bench.s (every new workflow has run its first tasks and set its timer); null if not before `until`. */
  const waitIdle = async (until: number): Promise<number | null> => {
    let zeroSince: number | null = null;
    while (Date.now() < until) {
      if ((await backlog()) === 0) {
        zeroSince ??= Date.now();
        if (Date.now() - zeroSince >= 2_000) return zeroSince;
      } else zeroSince = null;
      await sleep(250);
    }
    return null;
  };

  const pilotStart = Date.now();
  const pilot = await createAll(pilotItems, creator.create, CONCURRENCY);
  if (pilot.errors) throw new Error(`pilot creates failed (${pilot.errors}): ${pilot.errorSamples.join(' | ')}`);
  // A post is ready once its workflow has loaded the schedule and set its timer; the worker
  // does that for new workflows more slowly than the API creates them, so the due time is
  // estimated from the rate at which pilot posts became ready, not from the create rate.
  const pilotIdle = await waitIdle(Date.now() + 180_000);
  const { timeline } = await import('./publishing/history');
  const { workflowIds } = await import('../lib/temporal');
  const pilotChecked = await Promise.all(
    pilot.ids
      .filter((x): x is string => !!x)
      .slice(0, 20)
      .map((id) => timeline(bench.tclient, workflowIds.publish(id), id, pilotDue.getTime()).catch(() => null)),
  );
  const pilotArmed = pilotChecked.filter((t) => t?.timerStarted != null).length;
  const readyRate = PILOT / (((pilotIdle ?? Date.now()) - pilotStart) / 1000);
  const estimateMs = (POSTS / Math.min(pilot.rate, readyRate)) * 1000;
  const earliest = Date.now() + estimateMs * 1.3 + MARGIN_MS;
  const dueMs = Math.ceil(earliest / 60_000) * 60_000;
  step(
    `pilot: ${PILOT} posts (due in 7 days) created at ${f0(pilot.rate)} posts/s (p50 ${pilot.latencyMs.p50.toFixed(0)} ms), ready (start delay or timer set) at ${readyRate.toFixed(1)} posts/s${pilotIdle ? '' : ' (task queue never drained)'}, ${pilotArmed}/${pilotChecked.length} checked are armed (start delay or timer) → ${f0(POSTS)} posts ≈ ${s1(estimateMs)} s; due minute ${new Date(dueMs).toISOString()} (in ${s1(dueMs - Date.now())} s)`,
  );

  const items: CreateItem[] = Array.from({ length: POSTS }, (_, i) => ({
    projectId: bench.s.projectIds[i % PROJECTS]!,
    content: postContent(rand),
    scheduledFor: new Date(dueMs + (SPREAD_MS ? Math.floor((i * SPREAD_MS) / POSTS) : 0)),
  }));
  const cpuCreate0 = snapshot();
  const writes0 = await bench.dbWrites();
  const created = await createAll(
    items,
    creator.create,
    CONCURRENCY,
    (n) =>
      void backlog().then(
        (b) => console.log(`    ${f0(n)} created, ${s1(dueMs - Date.now())} s before due, ${f0(b)} tasks queued`),
        () => undefined,
      ),
  );
  const cpuCreate1 = snapshot();
  creator.close();
  const finishedBeforeDueMs = dueMs - Date.now();
  step(
    `created ${f0(POSTS - created.errors)} posts in ${s1(created.durationMs)} s (${f0(created.rate)} posts/s, p50 ${created.latencyMs.p50.toFixed(0)} ms, p99 ${created.latencyMs.p99.toFixed(0)} ms, ${created.errors} errors), ${s1(finishedBeforeDueMs)} s before due`,
  );
  if (created.errors) console.log(`    create errors: ${created.errorSamples.join(' | ')}`);
  if (finishedBeforeDueMs < 0) console.log('    NOTE: creation ran past the due time: raise --margin');
  const unsynced = Number(
    (
      await bench.mon.query(
        `select count(*)::int as n from posts where project_id = any($1) and workflow_synced_version < schedule_version`,
        [bench.s.projectIds],
      )
    ).rows[0].n,
  );
  if (unsynced)
    console.log(`    NOTE: ${unsynced} posts' signal-with-start failed; the reconciler (every 30 s) has to start their workflows`);
  const dueOf = new Map<string, number>();
  items.forEach((it, i) => {
    if (created.ids[i]) dueOf.set(created.ids[i]!, it.scheduledFor.getTime());
  });
  // The API is idle from here on; stopping it leaves the worker alone on the database.
  if (api) await api.stop();
  const readyAt = await waitIdle(dueMs - 2_000);
  const backlogAtDue = readyAt ? 0 : await backlog();
  if (readyAt)
    step(
      `every publish workflow is armed (start delay or timer): task queue empty ${s1(readyAt - (dueMs - finishedBeforeDueMs))} s after the last create, ${s1(dueMs - readyAt)} s before due`,
    );
  else
    step(
      `NOTE: ${f0(backlogAtDue)} tasks still queued at the due time: some publish workflows have not set their timer yet (creation backlog spills into the due minute)`,
    );
  return {
    api,
    pilot,
    workflowIds,
    readyRate,
    estimateMs,
    dueMs,
    cpuCreate0,
    writes0,
    created,
    cpuCreate1,
    finishedBeforeDueMs,
    unsynced,
    dueOf,
    readyAt,
    backlogAtDue,
  };
}

/** Due time → everything published (or the deadline), the worker killed and restarted on the way. */
async function drainPosts(bench: Bench, state: Fleet & Creation) {
  // ── Drain: due time → everything published (or the deadline) ──────────────────────────
  const expected = state.dueOf.size;
  const lastDue = state.dueMs + (SPREAD_MS ? SPREAD_MS : 0);
  const wait = state.dueMs - Date.now() - 3_000;
  if (wait > 0) {
    step(`waiting ${s1(wait)} s for the due time`);
    await sleep(wait);
  }

  const pgGroups = async (): Promise<Groups> => {
    const { rows } = await bench.mon.query<{ pid: number; datname: string | null; backend_type: string }>(
      'select pid, datname, backend_type from pg_stat_activity',
    );
    const foreign = new Set(rows.filter((r) => r.backend_type === 'client backend' && r.datname !== BENCH_DB).map((r) => r.pid));
    const temporalBackends = new Set(rows.filter((r) => r.datname !== null && bench.temporalDbs.includes(r.datname)).map((r) => r.pid));
    const workerPids = new Set(state.workers.map((w) => w.pid));
    const temporalNow = new Set(bench.temporalPids());
    return {
      worker: (p) => workerPids.has(p.pid),
      temporal: (p) => temporalNow.has(p.pid),
      postgres: (p) => p.comm === 'postgres' && !foreign.has(p.pid),
      // On the cluster: the backends serving the Temporal server's two databases.
      'postgres (temporal)': (p) => temporalBackends.has(p.pid),
      redis: (p) => p.comm.startsWith('redis-server'),
      'bench+sim': (p) => p.pid === process.pid,
      api: (p) => state.api !== null && p.pid === state.api.pid,
    };
  };
  const createCpu = diff(state.cpuCreate0, state.cpuCreate1, await pgGroups());

  let cpuDrain0: CpuSnapshot = snapshot();
  // One /proc snapshot a second, so CPU can be split by window afterwards (steady state
  // before the kill, the bulk of the drain without the idle wait for stranded activities).
  const cpuSnaps: Array<{ wall: number; snap: CpuSnapshot }> = [];
  let killSnap: { wall: number; snap: CpuSnapshot } | null = null;
  const progress: Array<{ t: number; published: number }> = [];
  const activity: ActivitySample[] = [];
  let killedAt: number | null = null;
  let publishedAtKill = 0;
  let restart: Promise<void> | null = null;
  let restartError: unknown = null;
  let w2: WorkerRun | null = null;
  let published = 0;
  let failed = 0;
  let lastPrint = 0;
  let lastPrintCount = 0;
  let tick = 0;
  let cpuStarted = false;
  step(`due at ${clock(state.dueMs)} — polling the posts table every 250 ms`);
  for (;;) {
    const now = Date.now();
    if (!cpuStarted && now >= state.dueMs) {
      cpuDrain0 = snapshot();
      cpuStarted = true;
      cpuSnaps.push({ wall: now, snap: cpuDrain0 });
    }
    if (cpuStarted && now - cpuSnaps.at(-1)!.wall >= 1000) cpuSnaps.push({ wall: now, snap: snapshot() });
    const r = (
      await bench.mon.query(
        `select count(*) filter (where status = 'published')::int as published, count(*) filter (where status = 'failed_to_publish')::int as failed from posts where project_id = any($1)`,
        [bench.s.projectIds],
      )
    ).rows[0];
    published = r.published;
    failed = r.failed;
    progress.push({ t: now, published });
    if (tick++ % 2 === 0) {
      const a = (
        await bench.mon.query<{ state: string | null; wait_event_type: string | null; n: number }>(
          `select state, wait_event_type, count(*)::int as n from pg_stat_activity where datname = $1 and backend_type = 'client backend' and pid <> pg_backend_pid() group by 1, 2`,
          [BENCH_DB],
        )
      ).rows;
      const sum = (f: (x: (typeof a)[number]) => boolean) => a.filter(f).reduce((acc, x) => acc + x.n, 0);
      activity.push({
        t: now,
        connections: sum(() => true),
        active: sum((x) => x.state === 'active'),
        idleInTx: sum((x) => x.state === 'idle in transaction'),
        lockWaits: sum((x) => x.wait_event_type === 'Lock'),
      });
    }
    if (now - lastPrint >= 5_000 && now >= state.dueMs - 1_000) {
      const w = state.workers[state.workers.length - 1]!;
      const rate = lastPrint ? ((published - lastPrintCount) * 1000) / (now - lastPrint) : 0;
      console.log(
        `    t=${s1(now - state.dueMs).padStart(6)} s  published ${f0(published).padStart(6)}/${f0(expected)}  ${f0(rate).padStart(5)}/s  failed ${failed}  worker #${w.index} ${w.exit ? 'dead' : `RSS ${mib(w.samples.at(-1)?.rssKiB ?? 0)}`}`,
      );
      lastPrint = now;
      lastPrintCount = published;
    }
    if (KILL && killedAt === null && now >= state.dueMs && (published >= KILL_AT * expected || now >= state.dueMs + KILL_FALLBACK_MS)) {
      // The steady-state CPU window ends here, with the worker still alive (a big process can
      // take a while to exit, and /proc forgets it once it has).
      const snap = snapshot();
      killedAt = Date.now();
      killSnap = { wall: killedAt, snap };
      cpuSnaps.push(killSnap);
      await state.w1.kill('SIGKILL');
      publishedAtKill = published;
      console.log(
        `    SIGKILL worker #1 at t=${s1(killedAt - state.dueMs)} s with ${f0(published)} published (${((published / expected) * 100).toFixed(1)}%); it was gone ${Date.now() - killedAt} ms later`,
      );
      restart = (async () => {
        await sleep(RESTART_DELAY_MS);
        w2 = state.launch();
        await w2.waitReady(bench.connection, TASK_QUEUE);
        console.log(
          `    worker #${w2.index} pid ${w2.pid} started at t=${s1(w2.startedAt - state.dueMs)} s, polling at t=${s1(w2.readyAt! - state.dueMs)} s`,
        );
      })().catch((err) => {
        restartError = err;
      });
    }
    if (restartError) throw restartError;
    if (published + failed >= expected) break;
    if (now > lastDue + DEADLINE_MS) {
      console.log(`    deadline reached: ${expected - published - failed} posts still scheduled`);
      break;
    }
    await sleep(250);
  }
  const cpuDrain1 = snapshot();
  const drainEnd = Date.now();
  if (restart) await restart;
  return {
    expected,
    lastDue,
    pgGroups,
    createCpu,
    cpuDrain0,
    cpuSnaps,
    killSnap,
    progress,
    activity,
    killedAt,
    publishedAtKill,
    w2,
    published,
    cpuDrain1,
    drainEnd,
  };
}

// ── Report: the figures, printed and written ─────────────────────────────────────────────────

type Figures = Awaited<ReturnType<typeof analyse>>;
type WorkerProfile = {
  thread: string;
  window: { fromS: number; toS: number; posts: number };
  sampledMs: number;
  summary: ProfileSummary;
};

async function report(b: Bench, r: Run) {
  const f = await analyse(b, r);
  printReport(r, f);
  writeResults(b, r, f, await profileWorker(r, f));
}

/** The posts table, the network and the workflow histories, against each other and the targets. */
async function analyse(bench: Bench, state: Run) {
  // ── Results ───────────────────────────────────────────────────────────────────────────
  const rows = (
    await bench.mon.query<{ id: string; published_at: Date | null; status: string; last_publish_error: string | null }>(
      `select id, published_at, status, last_publish_error from posts where project_id = any($1)`,
      [bench.s.projectIds],
    )
  ).rows;
  const lags: number[] = [];
  const lagOf = new Map<string, number>();
  let lost = 0;
  const lostIds: string[] = [];
  let late = 0;
  let firstPub = Infinity;
  let lastPub = 0;
  const errorsSeen: Record<string, number> = {};
  for (const row of rows) {
    const due = state.dueOf.get(row.id);
    if (due === undefined) continue;
    if (row.status !== 'published' || !row.published_at) {
      lost++;
      lostIds.push(row.id);
      if (row.last_publish_error) errorsSeen[row.last_publish_error] = (errorsSeen[row.last_publish_error] ?? 0) + 1;
      continue;
    }
    const at = row.published_at.getTime();
    const lag = at - due;
    if (lag > LATE_AFTER_MS) late++;
    lags.push(lag);
    lagOf.set(row.id, lag);
    firstPub = Math.min(firstPub, at);
    lastPub = Math.max(lastPub, at);
  }
  // A post never published counts with the deadline as its lag, so the percentiles stay a lower bound rather than flattering.
  const lag = lagSummary([...lags, ...lostIds.map(() => DEADLINE_MS)]);

  // The network's side: one post per reference, exactly once.
  const onNetwork = await bench.sim.listPosts({ limit: 1_000_000 });
  const perRef = new Map<string, { n: number; receivedAt: number }>();
  for (const p of onNetwork.posts) {
    if (!p.reference) continue;
    const e = perRef.get(p.reference);
    if (e) e.n++;
    else perRef.set(p.reference, { n: 1, receivedAt: Date.parse(p.receivedAt) });
  }
  let duplicated = 0;
  let missingOnNetwork = 0;
  let publishedNotOnNetwork = 0;
  const networkLags: number[] = [];
  for (const [id, due] of state.dueOf) {
    const e = perRef.get(id);
    if (!e) {
      missingOnNetwork++;
      if (lagOf.has(id)) publishedNotOnNetwork++;
      continue;
    }
    if (e.n > 1) duplicated++;
    networkLags.push(e.receivedAt - due);
  }
  const stray = onNetwork.posts.filter((p) => !p.reference || !state.dueOf.has(p.reference)).length;
  const counts = await bench.sim.counts();

  // Phases: before the kill, the gap, after the restart.
  const w2r = state.w2 as WorkerRun | null;
  const pubTimes = rows
    .filter((r) => r.published_at && state.dueOf.has(r.id))
    .map((r) => r.published_at!.getTime())
    .sort((a, b) => a - b);
  const firstAfterRestart = w2r ? (pubTimes.find((t) => t >= w2r.startedAt) ?? null) : null;
  const beforeKill = state.killedAt ? pubTimes.filter((t) => t < state.killedAt!).length : pubTimes.length;
  const afterRestart = firstAfterRestart ? pubTimes.filter((t) => t >= firstAfterRestart).length : 0;
  const lastBeforeKill = state.killedAt ? (pubTimes.filter((t) => t < state.killedAt!).at(-1) ?? null) : null;
  // Where the time went: the publish workflow history of every post (or a random sample).
  const ids = [...lagOf.keys()];
  const sampleRand = prng(7);
  let sampleIds: string[] = ids;
  if (HISTORY_SAMPLE < ids.length) {
    const set = new Set<string>();
    while (set.size < HISTORY_SAMPLE) set.add(ids[Math.floor(sampleRand() * ids.length)]!);
    sampleIds = [...set];
  }
  const toItem = (id: string) => ({ workflowId: state.workflowIds.publish(id), postId: id, dueMs: state.dueOf.get(id)! });
  let hist: { ok: PostTimeline[]; errors: number } = { ok: [], errors: 0 };
  if (sampleIds.length) {
    const t0 = Date.now();
    hist = await timelines(bench.tclient, sampleIds.map(toItem));
    step(`read ${f0(hist.ok.length)} publish workflow histories in ${s1(Date.now() - t0)} s`);
  }
  const slowestN = Math.max(1, Math.ceil(hist.ok.length / 100));
  const histSlow = [...hist.ok].sort((a, b) => lagOf.get(b.postId)! - lagOf.get(a.postId)!).slice(0, slowestN);
  const breakdown = (tl: PostTimeline[]) => {
    const row = (f: (t: PostTimeline) => number | null) => ({
      p50: median(tl.map(f)),
      p99: pct(tl.map(f), 0.99),
      max: pct(tl.map(f), 1),
    });
    return {
      workflows: tl.length,
      notReadyAtDue: tl.filter((t) => t.timerStarted === null || t.timerStarted > 0).length,
      firstTaskStartedMs: row((t) => t.firstTaskStarted),
      timerFiredAfterDueMs: row((t) => t.timerFired),
      workflowTaskWaitMs: row((t) => t.wfTaskWait),
      workflowTaskRunMs: row((t) => t.wfTaskRun),
      activityScheduledAfterDueMs: row((t) => t.activityScheduled),
      activityQueueMs: row((t) => t.activityQueue),
      activityRunMs: row((t) => t.activityRun),
      closeWaitMs: row((t) => t.closeWait),
      activityRetried: tl.filter((t) => t.activityAttempts > 1).length,
      withStickyTimeout: tl.filter((t) => t.stickyTimeouts > 0).length,
      withStartToCloseTimeout: tl.filter((t) => t.startToCloseTimeouts > 0).length,
    };
  };
  const bd = breakdown(hist.ok);
  const bdSlow = breakdown(histSlow);
  const retried = new Set(hist.ok.filter((t) => t.activityAttempts > 1).map((t) => t.postId));
  // A few raw histories (the first, the median and the last published; one never published) for reading by eye.
  const byLag = [...sampleIds].sort((a, b) => lagOf.get(a)! - lagOf.get(b)!);
  const dumpIds = [
    ...new Set(
      [byLag[0], byLag[Math.floor(byLag.length / 2)], byLag.at(-1), [...retried][0], ...byLag.filter((_, i) => i % 997 === 5)].filter(
        (x): x is string => !!x,
      ),
    ),
  ].slice(0, DUMP_HISTORIES);
  if (lostIds.length && DUMP_HISTORIES) dumpIds.push(lostIds[0]!);
  const dumped: Record<string, unknown> = {};
  for (const id of dumpIds) {
    dumped[id] = {
      lagS: lagOf.has(id) ? lagOf.get(id)! / 1000 : 'not published',
      events: await compactHistory(bench.tclient, state.workflowIds.publish(id), state.dueOf.get(id)!).catch((err) => String(err)),
    };
  }

  // A publish activity held by the killed worker is retried only when its start-to-close
  // timeout (2 min, no heartbeat) expires: those posts are "stranded".
  const pubOf = new Map(rows.filter((r) => r.published_at && state.dueOf.has(r.id)).map((r) => [r.id, r.published_at!.getTime()]));
  const strandedPublished = [...retried].map((id) => pubOf.get(id)).filter((t): t is number => t !== undefined);
  const normalTimes = [...pubOf.entries()]
    .filter(([id]) => !retried.has(id))
    .map(([, t]) => t)
    .sort((a, b) => a - b);
  const throughput = lastPub > 0 ? lags.length / ((lastPub - state.dueMs) / 1000) : 0;
  const rateBeforeKill = state.killedAt && lastBeforeKill && beforeKill > 1 ? beforeKill / ((lastBeforeKill - firstPub) / 1000) : null;
  const afterRestartTimes = firstAfterRestart ? normalTimes.filter((t) => t >= firstAfterRestart) : [];
  const rateAfterRestart =
    afterRestartTimes.length > 1 ? afterRestartTimes.length / ((afterRestartTimes.at(-1)! - afterRestartTimes[0]!) / 1000) : null;

  const groupsNow = await state.pgGroups();
  const cpu = diff(state.cpuDrain0, state.cpuDrain1, groupsNow);
  state.cpuSnaps.push({ wall: state.drainEnd, snap: state.cpuDrain1 });
  const snapAt = (wall: number) =>
    state.killSnap && wall === state.killSnap.wall
      ? state.killSnap
      : state.cpuSnaps.reduce((best, x) => (Math.abs(x.wall - wall) < Math.abs(best.wall - wall) ? x : best), state.cpuSnaps[0]!);
  const windowCpu = (from: number, to: number) => {
    if (!state.cpuSnaps.length) return null;
    const a = snapAt(from);
    const b = snapAt(to);
    if (b.wall <= a.wall) return null;
    const d = diff(a.snap, b.snap, groupsNow);
    if (!d) return null;
    const secs = (b.wall - a.wall) / 1000;
    const posts = pubTimes.filter((t) => t >= a.wall && t < b.wall).length;
    const map = (f: (ms: number) => number) => Object.fromEntries(Object.entries(d.cpuMs).map(([k, v]) => [k, f(v)]));
    return {
      fromS: (a.wall - state.dueMs) / 1000,
      toS: (b.wall - state.dueMs) / 1000,
      seconds: secs,
      posts,
      machineBusy: d.machineBusy,
      otherShare: d.cpuMs.other! / (secs * 1000 * CPUS),
      cores: map((v) => v / 1000 / secs),
      usPerPost: map((v) => (posts ? Math.round((v * 1000) / posts) : 0)),
    };
  };
  const bulkEnd = normalTimes.at(-1) ?? state.drainEnd;
  const cpuSteady = state.killedAt ? windowCpu(state.dueMs, state.killedAt) : null;
  const cpuBulk = windowCpu(state.dueMs, bulkEnd);
  const drainS = (state.drainEnd - state.dueMs) / 1000;
  const cpuPerPost =
    cpu && lags.length ? Object.fromEntries(Object.entries(cpu.cpuMs).map(([k, ms]) => [k, Math.round((ms * 1000) / lags.length)])) : null;
  const createCpuPerPost = state.createCpu
    ? Object.fromEntries(Object.entries(state.createCpu.cpuMs).map(([k, ms]) => [k, Math.round((ms * 1000) / Math.max(1, state.expected))]))
    : null;
  const drainActivity = state.activity.filter((a) => a.t >= state.dueMs);
  const act = {
    connections: statsOf(drainActivity.map((a) => a.connections)),
    active: statsOf(drainActivity.map((a) => a.active)),
    idleInTransaction: statsOf(drainActivity.map((a) => a.idleInTx)),
    lockWaits: statsOf(drainActivity.map((a) => a.lockWaits)),
  };

  const lostMet = lost === 0;
  const dupMet = duplicated === 0;
  // Targets (issue 19): ratios to the baselines of this very run.
  const bare = state.baselines.find((b) => b.kind === 'bare-timer') ?? null;
  const timerActivity = state.baselines.find((b) => b.kind === 'timer+activity') ?? null;
  const peakRssMiB = Math.max(0, ...state.workers.map((w) => w.peakRssKiB / 1024));
  const drainVsTimerActivity = timerActivity ? throughput / timerActivity.drainPerS : null;
  const drainVsBare = bare ? throughput / bare.drainPerS : null;
  const p99VsBaseline = timerActivity && timerActivity.lag.p99S > 0 ? lag.p99S / timerActivity.lag.p99S : null;
  // Steady state: RSS flat = the last third of the drain peaks no more than 10 % above the first third.
  const rssWindow = (from: number, to: number) =>
    Math.max(0, ...state.workers.flatMap((w) => w.samples.filter((x) => x.t >= from && x.t < to).map((x) => x.rssKiB / 1024)));
  const third = (state.lastDue - state.dueMs) / 3;
  const rssFirstThirdMiB = rssWindow(state.dueMs, state.dueMs + third);
  const rssLastThirdMiB = rssWindow(state.dueMs + 2 * third, state.lastDue + 1);
  const rssFlat = rssFirstThirdMiB > 0 && rssLastThirdMiB <= rssFirstThirdMiB * 1.1;
  const p99Met = STEADY
    ? lag.p99S <= TARGET_STEADY_P99_S
    : p99VsBaseline !== null
      ? p99VsBaseline <= TARGET_P99_VS_BASELINE
      : lag.p99S < TARGET_P99_S;
  const drainMet = drainVsTimerActivity === null || drainVsTimerActivity >= TARGET_DRAIN_VS_TIMER_ACTIVITY;
  const rssMet = STEADY ? rssFlat : peakRssMiB <= TARGET_PEAK_RSS_MIB;

  // Database writes from the first create to here (the baselines ran before): the service's
  // database and, on the cluster, Temporal's two (docs/publishing.md "Capacity").
  const writes1 = await bench.dbWrites();
  const writesPerPost = Object.fromEntries(
    Object.entries(writes1).map(([db, w]) => [
      db,
      {
        commits: (w.commits - (state.writes0[db]?.commits ?? 0)) / state.expected,
        rows: (w.rows - (state.writes0[db]?.rows ?? 0)) / state.expected,
      },
    ]),
  );
  const historyEvents = hist.ok.length ? hist.ok.reduce((a, t) => a + t.historyEvents, 0) / hist.ok.length : null;
  const nl = lagSummary(networkLags);
  return {
    lost,
    late,
    lastPub,
    errorsSeen,
    lag,
    onNetwork,
    duplicated,
    missingOnNetwork,
    publishedNotOnNetwork,
    networkLags,
    stray,
    counts,
    w2r,
    pubTimes,
    firstAfterRestart,
    beforeKill,
    afterRestart,
    lastBeforeKill,
    hist,
    bd,
    bdSlow,
    retried,
    dumpIds,
    dumped,
    strandedPublished,
    throughput,
    rateBeforeKill,
    rateAfterRestart,
    cpu,
    bulkEnd,
    cpuSteady,
    cpuBulk,
    drainS,
    cpuPerPost,
    createCpuPerPost,
    act,
    lostMet,
    dupMet,
    peakRssMiB,
    drainVsTimerActivity,
    drainVsBare,
    p99VsBaseline,
    rssFirstThirdMiB,
    rssLastThirdMiB,
    rssFlat,
    p99Met,
    drainMet,
    rssMet,
    writesPerPost,
    historyEvents,
    nl,
  };
}

function printReport(r: Run, f: Figures) {
  // ── Report ────────────────────────────────────────────────────────────────────────────
  const L = (label: string, value: string) => console.log(`  ${label.padEnd(44)}${value}`);
  const ms = (x: number | null) => (x === null ? '—' : x >= 10_000 ? `${s1(x)} s` : `${Math.round(x)} ms`);
  console.log(
    `\n${f0(r.expected)} posts due at ${new Date(r.dueMs).toISOString()}${SPREAD_MS ? ` (+0…${SPREAD_MS / 1000} s)` : ''} over ${PROJECTS} account(s); created via ${CREATE === 'api' ? 'POST /v1/posts (API process)' : 'insertPost + afterPostCommitted in-process'}`,
  );
  L(
    'creation',
    `${s1(r.created.durationMs)} s, ${f0(r.created.rate)} posts/s, p50 ${r.created.latencyMs.p50.toFixed(0)} ms / p99 ${r.created.latencyMs.p99.toFixed(0)} ms per create, ${r.created.errors} errors, done ${s1(r.finishedBeforeDueMs)} s before due`,
  );
  L(
    'lag = published_at − due   p50 / p99 / max',
    `${f.lag.p50S.toFixed(1)} s / ${f.lag.p99S.toFixed(1)} s / ${f.lag.maxS.toFixed(1)} s   (p90 ${f.lag.p90S.toFixed(1)} s, mean ${f.lag.meanS.toFixed(1)} s)`,
  );
  L('  same, on the network (simulator receivedAt)', `${f.nl.p50S.toFixed(1)} s / ${f.nl.p99S.toFixed(1)} s / ${f.nl.maxS.toFixed(1)} s`);
  if (STEADY) L(`target p99 ≤ ${TARGET_STEADY_P99_S} s`, f.p99Met ? 'MET' : 'MISSED');
  else if (f.p99VsBaseline === null) L(`target p99 < ${TARGET_P99_S} s`, f.p99Met ? 'MET' : 'MISSED');
  L(`late (published > ${LATE_AFTER_MS / 1000} s after due)`, `${f0(f.late)}`);
  L(
    `lost (not published ${DEADLINE_MS / 1000} s after due)`,
    `${f.lost}${f.lost ? `  ${JSON.stringify(f.errorsSeen)} (counted in the lag figures with ${DEADLINE_MS / 1000} s)` : ''}   ${f.lostMet ? 'OK' : 'FAIL'}`,
  );
  L(
    'duplicated (>1 network post per post id)',
    `${f.duplicated}   ${f.dupMet ? 'OK' : 'FAIL'}  (idempotent replays ${f.counts.replays}, create calls ${f0(f.counts.createCalls)}, stray network posts ${f.stray}, published but not on network ${f.publishedNotOnNetwork})`,
  );
  if (f.historyEvents !== null) L('history events per publish workflow (sampled)', f.historyEvents.toFixed(1));
  for (const [db, w] of Object.entries(f.writesPerPost))
    L(`  ${db} per post`, `${w.commits.toFixed(1)} commits, ${w.rows.toFixed(1)} rows written (inserted + updated + deleted)`);
  L('throughput (published / (last − due))', `${f.throughput.toFixed(1)} posts/s; all published ${s1(f.lastPub - r.dueMs)} s after due`);
  if (f.rateBeforeKill !== null)
    L('  before the kill / after the restart', `${f.rateBeforeKill.toFixed(1)} posts/s / ${f.rateAfterRestart?.toFixed(1) ?? '—'} posts/s`);
  if (r.killedAt) {
    L(
      'kill',
      `t=${s1(r.killedAt - r.dueMs)} s, ${f0(r.publishedAtKill)} published (${((r.publishedAtKill / r.expected) * 100).toFixed(1)}%)`,
    );
    if (f.w2r)
      L(
        'restart',
        `started t=${s1(f.w2r.startedAt - r.dueMs)} s, polling t=${f.w2r.readyAt ? s1(f.w2r.readyAt - r.dueMs) : '—'} s (start-up ${f.w2r.readyAt ? s1(f.w2r.readyAt - f.w2r.startedAt) : '—'} s), first publish t=${f.firstAfterRestart ? s1(f.firstAfterRestart - r.dueMs) : '—'} s`,
      );
    L(
      '  no publishes between',
      `t=${f.lastBeforeKill ? s1(f.lastBeforeKill - r.dueMs) : '—'} s and t=${f.firstAfterRestart ? s1(f.firstAfterRestart - r.dueMs) : '—'} s`,
    );
    if (f.hist.ok.length)
      L(
        '  stranded by the kill',
        `${f.retried.size} posts whose publishPost ran again after its 2 min start-to-close timeout (attempt > 1)${f.strandedPublished.length ? `, published t=${s1(Math.min(...f.strandedPublished) - r.dueMs)}…${s1(Math.max(...f.strandedPublished) - r.dueMs)} s` : ''}`,
      );
  }
  if (r.baselines.length) {
    console.log(
      `  against the bare baselines of this run (same ${CLUSTER ? 'cluster' : 'dev server'}, same worker settings and count, no kill):`,
    );
    for (const b of r.baselines)
      L(
        `  ${b.kind}`,
        `${b.drainPerS.toFixed(1)} workflows/s, lag p50 ${b.lag.p50S.toFixed(1)} s / p99 ${b.lag.p99S.toFixed(1)} s, worker peak RSS ${b.workerPeakRssMiB.toFixed(0)} MiB`,
      );
    if (f.drainVsTimerActivity !== null)
      L(
        '  drain ÷ timer+activity drain',
        `${f.drainVsTimerActivity.toFixed(2)}×   target ≥ ${TARGET_DRAIN_VS_TIMER_ACTIVITY}×  ${f.drainMet ? 'MET' : 'MISSED'}`,
      );
    if (f.drainVsBare !== null)
      L(
        '  drain ÷ bare-timer drain',
        `${f.drainVsBare.toFixed(2)}×   aim ≥ ${AIM_DRAIN_VS_BARE_TIMER}×  ${f.drainVsBare >= AIM_DRAIN_VS_BARE_TIMER ? 'MET' : 'MISSED'}`,
      );
    if (f.p99VsBaseline !== null)
      L(
        '  lag p99 ÷ timer+activity p99',
        `${f.p99VsBaseline.toFixed(2)}×   target ≤ ${TARGET_P99_VS_BASELINE}×  ${f.p99Met ? 'MET' : 'MISSED'}`,
      );
  }
  if (STEADY)
    L(
      'worker RSS flat (last third ≤ 1.1 × first third)',
      `${f.rssFirstThirdMiB.toFixed(0)} MiB → ${f.rssLastThirdMiB.toFixed(0)} MiB   ${f.rssMet ? 'MET' : 'MISSED'}`,
    );
  else L(`worker peak RSS ≤ ${TARGET_PEAK_RSS_MIB} MiB`, `${f.peakRssMiB.toFixed(0)} MiB   ${f.rssMet ? 'MET' : 'MISSED'}`);
  for (const w of r.workers)
    L(
      `worker #${w.index} pid ${w.pid} peak RSS (VmHWM)`,
      `${mib(w.peakRssKiB)} (${mib(w.hwmKiB)}); ready ${w.readyAt ? s1(w.readyAt - w.startedAt) : '—'} s after spawn; ${w.exit ? `exit ${w.exit.signal ?? w.exit.code}` : 'running'}`,
    );
  if (f.bd.workflows) {
    console.log(
      `  where the lag went — publish workflow histories of ${f0(f.bd.workflows)} posts | the slowest ${f.bdSlow.workflows}; p50 / p99 | p50 / max:`,
    );
    const B = (label: string, a: { p50: number | null; p99: number | null }, b: { p50: number | null; max: number | null }) =>
      L(`  ${label}`, `${ms(a.p50)} / ${ms(a.p99)}   | ${ms(b.p50)} / ${ms(b.max)}`);
    L(
      '  not ready at due (not armed yet)',
      `${f0(f.bd.notReadyAtDue)} posts${f.bd.notReadyAtDue ? ` — their workflow's first task started p50 ${ms(f.bd.firstTaskStartedMs.p50)} / max ${ms(f.bd.firstTaskStartedMs.max)} relative to due` : ''}`,
    );
    B('timer / start delay fired (after due)', f.bd.timerFiredAfterDueMs, f.bdSlow.timerFiredAfterDueMs);
    B('→ workflow task started (queue wait)', f.bd.workflowTaskWaitMs, f.bdSlow.workflowTaskWaitMs);
    B('  workflow task run', f.bd.workflowTaskRunMs, f.bdSlow.workflowTaskRunMs);
    B('publishPost scheduled (after due)', f.bd.activityScheduledAfterDueMs, f.bdSlow.activityScheduledAfterDueMs);
    B('→ publishPost started (last attempt)', f.bd.activityQueueMs, f.bdSlow.activityQueueMs);
    B('  publishPost run (pool + tx + call)', f.bd.activityRunMs, f.bdSlow.activityRunMs);
    B('→ workflow completed', f.bd.closeWaitMs, f.bdSlow.closeWaitMs);
    L(
      '  workflow task timed out after the timer',
      `${f0(f.bd.withStickyTimeout)} posts on a sticky queue (not picked up within the 10 s sticky schedule-to-start timeout), ${f0(f.bd.withStartToCloseTimeout)} held by a dead worker`,
    );
  }
  L(
    'bench DB backends during drain (mean / max)',
    `${f.act.connections.mean.toFixed(1)} / ${f.act.connections.max} connected, ${f.act.active.mean.toFixed(1)} / ${f.act.active.max} active, ${f.act.idleInTransaction.mean.toFixed(1)} / ${f.act.idleInTransaction.max} idle in transaction, ${f.act.lockWaits.mean.toFixed(1)} / ${f.act.lockWaits.max} waiting on a lock`,
  );
  for (const [label, w] of [
    ['steady state: due → kill', f.cpuSteady],
    ['bulk: due → last non-stranded post', f.cpuBulk],
  ] as const) {
    if (!w) continue;
    L(
      `CPU, ${label}`,
      `t=${w.fromS.toFixed(1)}…${w.toS.toFixed(1)} s, ${f0(w.posts)} posts (${(w.posts / w.seconds).toFixed(1)}/s), machine busy ${(w.machineBusy * 100).toFixed(0)}%${w.otherShare >= 0.05 ? ` — NOTE: other processes took ${(w.otherShare * 100).toFixed(0)}% of the machine` : ''}`,
    );
    L(
      '  cores used',
      Object.entries(w.cores)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(', '),
    );
    L(
      '  CPU µs per published post',
      Object.entries(w.usPerPost)
        .map(([k, v]) => `${k} ${f0(v)}`)
        .join(', '),
    );
  }
  if (r.createCpu && f.createCpuPerPost) {
    const share = r.createCpu.cpuMs.other! / ((r.created.durationMs / 1000) * 1000 * CPUS);
    L(
      'CPU during creation, µs per post',
      Object.entries(f.createCpuPerPost)
        .map(([k, v]) => `${k} ${f0(v)}`)
        .join(', ') + (share >= 0.05 ? ` — NOTE: other processes took ${(share * 100).toFixed(0)}% of the machine` : ''),
    );
  }
}

/** The surviving worker's CPU profile, cut to the drain window it served. */
async function profileWorker(r: Run, f: Figures): Promise<WorkerProfile[] | null> {
  // The surviving worker's CPU profile, cut to the drain window it served.
  let profiles: WorkerProfile[] | null = null;
  const last = r.workers.at(-1)!;
  if (WORKER_PROFILE && !last.exit) {
    const t = setTimeout(() => last.child.kill('SIGKILL'), 20_000);
    await last.kill('SIGTERM');
    clearTimeout(t);
    const dir = path.join(RESULTS_DIR, 'profiles', `publishing${opt.tag ? `-${opt.tag}` : ''}-worker-${last.index}`);
    const files = fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.cpuprofile') && !f.startsWith('drain-'))
          .sort()
      : [];
    const from = Math.max(r.dueMs, last.readyAt ?? r.dueMs);
    const to = f.bulkEnd;
    const posts = f.pubTimes.filter((x) => x >= from && x <= to).length;
    profiles = [];
    for (const f of files) {
      const out = path.join(dir, `drain-${f}`);
      cutProfile(path.join(dir, f), out, last.exitedAt!, from, to);
      // File names: CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main
      // thread (activities, SDK bridge); workflow code runs in one of the worker threads.
      const thread = f.split('.')[4] === '0' ? 'main thread' : `worker thread ${f.split('.')[4]}`;
      const summary = summarizeProfile(out, ROOT, 15);
      const sampledMs = summary.totalMs;
      if (!sampledMs) continue;
      profiles.push({ thread, window: { fromS: (from - r.dueMs) / 1000, toS: (to - r.dueMs) / 1000, posts }, sampledMs, summary });
      printProfile(
        `worker #${last.index} ${thread}, t=${s1(from - r.dueMs)}…${s1(to - r.dueMs)} s, ${f0(posts)} posts published (µs/req = µs per published post)`,
        summary,
        posts,
      );
    }
    if (!files.length) console.log(`  (no CPU profile found in ${path.relative(process.cwd(), dir)})`);
  }
  return profiles;
}

function writeResults(b: Bench, r: Run, f: Figures, profiles: WorkerProfile[] | null) {
  const results = {
    bench: 'publishing',
    finishedAt: new Date().toISOString(),
    wallSeconds: Math.round((Date.now() - b.startedAt) / 1000),
    machine: b.machine,
    settings: {
      posts: POSTS,
      projects: PROJECTS,
      create: CREATE,
      createConcurrency: CONCURRENCY,
      pilot: PILOT,
      marginS: MARGIN_MS / 1000,
      spreadS: SPREAD_MS / 1000,
      dueAt: new Date(r.dueMs).toISOString(),
      kill: KILL,
      killAt: KILL_AT,
      killFallbackS: KILL_FALLBACK_MS / 1000,
      restartDelayS: RESTART_DELAY_MS / 1000,
      deadlineS: DEADLINE_MS / 1000,
      networkLatencyMs: NETWORK_LATENCY_MS,
      workerActivityConcurrency: ACTIVITY_CONCURRENCY,
      workerWorkflowConcurrency: WORKFLOW_CONCURRENCY,
      workerHeapMiB: Math.round(heapLimitMiB),
      workerBundle: WORKER_BUNDLE,
      maxCachedWorkflows: MAX_CACHED_WORKFLOWS,
      dbPoolMax: b.DB_POOL,
      publishDelaySeconds: 0,
      temporal: CLUSTER ? 'cluster tier: frontend, history, matching, worker processes on Postgres' : 'dev server, in memory',
      workers: WORKER_COUNT,
      database: BENCH_DB,
      redisDb: new URL(REDIS_URL).pathname.slice(1) || '0',
      taskQueue: TASK_QUEUE,
    },
    creation: {
      pilot: { posts: PILOT, rate: r.pilot.rate, latencyMs: r.pilot.latencyMs },
      estimateS: r.estimateMs / 1000,
      durationS: r.created.durationMs / 1000,
      rate: r.created.rate,
      latencyMs: r.created.latencyMs,
      errors: r.created.errors,
      errorSamples: r.created.errorSamples,
      finishedBeforeDueS: r.finishedBeforeDueMs / 1000,
      unsyncedWorkflows: r.unsynced,
      pilotReadyRate: r.readyRate,
      allReadyBeforeDueS: r.readyAt ? (r.dueMs - r.readyAt) / 1000 : null,
      tasksQueuedAtDue: r.backlogAtDue,
      cpuUsPerPost: f.createCpuPerPost,
    },
    lag: f.lag,
    networkLag: f.nl,
    late: f.late,
    lateAfterS: LATE_AFTER_MS / 1000,
    lost: f.lost,
    lostErrors: f.errorsSeen,
    duplicated: f.duplicated,
    network: {
      posts: f.onNetwork.total,
      stray: f.stray,
      missingOnNetwork: f.missingOnNetwork,
      publishedNotOnNetwork: f.publishedNotOnNetwork,
      counts: f.counts,
    },
    throughput: {
      postsPerSecond: f.throughput,
      allPublishedAfterDueS: f.lastPub ? (f.lastPub - r.dueMs) / 1000 : null,
      beforeKill: f.rateBeforeKill,
      afterRestart: f.rateAfterRestart,
    },
    kill: r.killedAt
      ? {
          atS: (r.killedAt - r.dueMs) / 1000,
          publishedAtKill: r.publishedAtKill,
          lastPublishBeforeKillS: f.lastBeforeKill ? (f.lastBeforeKill - r.dueMs) / 1000 : null,
          restartStartedS: f.w2r ? (f.w2r.startedAt - r.dueMs) / 1000 : null,
          restartReadyS: f.w2r?.readyAt ? (f.w2r.readyAt - r.dueMs) / 1000 : null,
          firstPublishAfterRestartS: f.firstAfterRestart ? (f.firstAfterRestart - r.dueMs) / 1000 : null,
          publishedBeforeKill: f.beforeKill,
          publishedAfterRestart: f.afterRestart,
          strandedByKill: f.hist.ok.length ? f.retried.size : null,
        }
      : null,
    workers: r.workers.map((w) => ({
      index: w.index,
      pid: w.pid,
      readyAfterS: w.readyAt ? (w.readyAt - w.startedAt) / 1000 : null,
      peakRssMiB: w.peakRssKiB / 1024,
      vmHwmMiB: w.hwmKiB / 1024,
      exit: w.exit,
      log: path.relative(ROOT, w.logFile),
      rssMiBEverySecond: w.samples
        .filter((_, i) => i % 4 === 0)
        .map((x) => ({ tS: Math.round((x.t - r.dueMs) / 100) / 10, mib: Math.round(x.rssKiB / 1024) })),
    })),
    lagBreakdown: { all: f.bd, slowest: f.bdSlow, historyReadErrors: f.hist.errors },
    workerProfiles: profiles
      ? profiles.map((p) => ({
          thread: p.thread,
          window: p.window,
          sampledMs: p.sampledMs,
          usPerPost: p.window.posts ? (p.sampledMs * 1000) / p.window.posts : null,
          byGroup: p.summary.byGroup.slice(0, 20),
          topSelf: p.summary.topSelf,
          file: path.relative(ROOT, p.summary.file),
        }))
      : null,
    dbActivityDuringDrain: f.act,
    cpuDuringDrain: f.cpu
      ? {
          seconds: f.drainS,
          machineBusy: f.cpu.machineBusy,
          cpuMs: f.cpu.cpuMs,
          usPerPost: f.cpuPerPost,
          otherShare: f.cpu.cpuMs.other! / (f.drainS * 1000 * CPUS),
        }
      : null,
    cpuSteadyBeforeKill: f.cpuSteady,
    cpuBulk: f.cpuBulk,
    cpuDuringCreation: r.createCpu
      ? {
          machineBusy: r.createCpu.machineBusy,
          cpuMs: r.createCpu.cpuMs,
          usPerPost: f.createCpuPerPost,
          otherShare: r.createCpu.cpuMs.other! / ((r.created.durationMs / 1000) * 1000 * CPUS),
        }
      : null,
    otherProcessesShareAtStart: b.otherAtStart,
    progressEverySecond: r.progress
      .filter((_, i) => i % 4 === 0)
      .map((p) => ({ tS: Math.round((p.t - r.dueMs) / 100) / 10, published: p.published })),
    mode: MODE,
    baselines: r.baselines,
    ratios: { drainVsTimerActivity: f.drainVsTimerActivity, drainVsBareTimer: f.drainVsBare, p99VsTimerActivity: f.p99VsBaseline },
    rss: { peakMiB: f.peakRssMiB, firstThirdMiB: f.rssFirstThirdMiB, lastThirdMiB: f.rssLastThirdMiB, flat: f.rssFlat },
    targets: {
      p99Lag: STEADY
        ? { maxS: TARGET_STEADY_P99_S, met: f.p99Met }
        : f.p99VsBaseline !== null
          ? { maxRatioToBaseline: TARGET_P99_VS_BASELINE, met: f.p99Met }
          : { maxS: TARGET_P99_S, met: f.p99Met },
      drainVsTimerActivity: { min: TARGET_DRAIN_VS_TIMER_ACTIVITY, met: f.drainMet },
      drainVsBareTimer: { aim: AIM_DRAIN_VS_BARE_TIMER, met: f.drainVsBare === null ? null : f.drainVsBare >= AIM_DRAIN_VS_BARE_TIMER },
      workerRss: STEADY ? { flat: true, met: f.rssMet } : { maxMiB: TARGET_PEAK_RSS_MIB, met: f.rssMet },
      lost: { max: 0, met: f.lostMet },
      duplicated: { max: 0, met: f.dupMet },
    },
  };
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const out = path.join(RESULTS_DIR, opt.tag ? `publishing-${opt.tag}.json` : 'publishing.json');
  fs.writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  if (f.dumpIds.length) fs.writeFileSync(out.replace(/\.json$/, '.histories.json'), JSON.stringify(f.dumped, null, 1) + '\n');
  console.log(
    `\nresults: ${path.relative(process.cwd(), out)}; worker logs: ${r.workers.map((w) => path.relative(process.cwd(), w.logFile)).join(', ')}`,
  );
  if (opt.strict && (!f.p99Met || !f.lostMet || !f.dupMet || !f.drainMet || !f.rssMet)) process.exitCode = 1;
}

main()
  .then(() => process.exit(process.exitCode ?? 0))
  .catch((err) => {
    console.error(`publishing: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
