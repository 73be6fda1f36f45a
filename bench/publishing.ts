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
import { machineInfo, waitForQuiet } from './harness/proc';
import { buildWorkerBundles } from './publishing/bundles';
import { startWorker, type WorkerRun } from './publishing/worker';
import { runBaseline, type BaselineResult } from './publishing/baseline';
import { seed } from './publishing/creation';
import {
  ACTIVITY_CONCURRENCY,
  BASELINE,
  BENCH_DB,
  CLUSTER,
  CONCURRENCY,
  DATABASE_URL,
  DEADLINE_MS,
  KILL,
  KILL_AT,
  MAX_CACHED_WORKFLOWS,
  NETWORK_LATENCY_MS,
  POSTS,
  PROJECTS,
  QUIET_WAIT_MS,
  REDIS_URL,
  RESTART_DELAY_MS,
  RESULTS_DIR,
  SPREAD_MS,
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
import { reserveTemporal, startBenchTemporal } from './harness/temporal';
import { f0, s1, step } from './harness/format';
import { report } from './publishing/report';
import { createPosts, drainPosts } from './publishing/herd';

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

export type Bench = Awaited<ReturnType<typeof setUp>>;

async function setUp(cleanups: Cleanups) {
  // lib/config reads the environment once, at import, and the simulator module imports it: every
  // address is chosen and every variable set before the first app module is loaded. The worker
  // and API children inherit the same environment.
  // The machine is measured quiet before the ports are picked: a port free minutes ago may not be.
  const otherAtStart = QUIET_WAIT_MS > 0 ? await waitForQuiet({ waitMs: QUIET_WAIT_MS }) : null;
  const reserved = await reserveTemporal(CLUSTER ? 'cluster' : 'dev');
  const temporalPort = reserved.port;
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

  // The dev server, or the cluster tier: its processes are the "temporal" CPU group.
  const temporal = await startBenchTemporal(reserved, { databaseUrl: DATABASE_URL, databaseName: 'bench_pub_temporal' });
  cleanups.push(() => temporal.stop());
  const temporalPids = temporal.pids;
  const temporalDbs = temporal.databases;
  const temporalAddress = temporal.address;
  step(`${temporal.describe}; task queue ${TASK_QUEUE}`);

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

export type Fleet = Awaited<ReturnType<typeof startWorkers>>;
export type Creation = Awaited<ReturnType<typeof createPosts>>;
export type Run = Awaited<ReturnType<typeof run>>;

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
  const launch = async () => {
    const index = workers.length + 1;
    const profDir = path.join(RESULTS_DIR, 'profiles', `publishing${opt.tag ? `-${opt.tag}` : ''}-worker-${index}`);
    if (WORKER_PROFILE) fs.rmSync(profDir, { recursive: true, force: true });
    const w = await startWorker(index, workerEnv(bench.bundlePaths), {
      logDir: RESULTS_DIR,
      execArgv: WORKER_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
    });
    workers.push(w);
    return w;
  };
  bench.cleanups.push(async () => {
    for (const w of workers) await w.stop();
  });
  const w1 = await launch();
  await w1.waitReady(bench.connection, TASK_QUEUE);
  step(
    `worker #1 pid ${w1.pid} polling after ${s1(w1.readyAt! - w1.startedAt)} s (${WORKER_BUNDLE === 'prebuilt' ? 'pre-built workflow bundle loaded' : 'workflow bundle built at start-up'})`,
  );
  // --workers N: the others run from the start and are never killed; they keep draining
  // while worker #1 is down.
  for (let i = 1; i < WORKER_COUNT; i++) {
    const w = await launch();
    await w.waitReady(bench.connection, TASK_QUEUE);
    step(`worker #${w.index} pid ${w.pid} polling after ${s1(w.readyAt! - w.startedAt)} s`);
  }
  return { workers, launch, w1 };
}

main()
  .then(() => process.exit(process.exitCode ?? 0))
  .catch((err) => {
    console.error(`publishing: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
