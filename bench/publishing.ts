// Bench: scheduled publishing under a thundering herd — 10,000 posts due in the same minute, the
// worker SIGKILLed and restarted while they go out. bench/publishing/README.md says what it runs
// and what the figures mean.

import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import type { Cleanups } from './harness/cleanups';
import { machineInfo } from './harness/proc';
import { buildWorkerBundles, reserveStack, runBench, ServiceProcesses, startStack } from './harness/stack';
import { lagAndMemory, runBaseline } from './publishing/baseline';
import * as S from './publishing/settings';
import { f0, RESULTS_DIR, s1, step } from './harness/format';
import { report } from './publishing/report';
import { createPosts, drainPosts } from './publishing/herd';

const { opt } = S;

runBench(
  () => 'publishing',
  async (cleanups) => {
    const bench = await setUp(cleanups);
    await report(bench, await run(bench));
  },
);

// ── Set up: the environment, the stores, Temporal, the simulator, the customer, the bundles ──

export type Bench = Awaited<ReturnType<typeof setUp>>;

async function setUp(cleanups: Cleanups) {
  // Every address chosen and every variable set before the first app module is loaded.
  const { DATABASE_URL, REDIS_URL, TASK_QUEUE } = S;
  const reserved = await reserveStack({
    quietWaitS: opt['quiet-wait'],
    kind: S.CLUSTER ? 'cluster' : 'dev',
    databaseUrl: DATABASE_URL,
    redisUrl: REDIS_URL,
    taskQueue: TASK_QUEUE,
    clusterDatabase: 'bench_pub_temporal',
  });
  const startedAt = Date.now();
  // The pool size every app process uses, and the worker's settings, as lib/config reads them.
  const { config } = await import('../lib/config');
  const w = config.worker;
  // The worker's heap limit as `npm run start:worker` sets it (WORKER_HEAP_MIB; 0 = Node's own limit).
  const heapLimitMiB = w.heapMiB || v8.getHeapStatistics().heap_size_limit / 1024 / 1024;
  const machine = machineInfo();
  const spread = S.SPREAD_MS ? `spread over ${S.SPREAD_MS / 1000} s from` : 'all at';
  const kill = `SIGKILLed at ${Math.round(opt['kill-at'] * 100)}% published and restarted ${opt['restart-delay']} s later`;
  const heap = `${f0(heapLimitMiB)} MiB${w.heapMiB ? ' (WORKER_HEAP_MIB, --worker-heap)' : " (Node's)"}`;
  const bundle = opt['worker-bundle'] === 'prebuilt' ? 'pre-built by the bench' : 'bundled by each worker at start-up';
  console.log(`publishing bench — ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  console.log(
    `  ${f0(S.POSTS)} posts over ${opt.projects} account(s), due ${spread} one hh:mm:00, PUBLISH_DELAY_SECONDS=0; worker ${S.KILL ? kill : 'never killed (baseline)'}`,
  );
  console.log(
    `  worker: WORKER_ACTIVITY_CONCURRENCY=${w.activityConcurrency}, WORKER_WORKFLOW_CONCURRENCY=${w.workflowConcurrency}, DB pool max ${config.dbPoolMax} per process (lib/db), workflow cache ${f0(w.maxCachedWorkflows)} (WORKER_MAX_CACHED_WORKFLOWS), heap limit ${heap}, workflow bundle ${bundle}; network createPost latency ${opt['network-latency']} ms`,
  );

  const stack = await startStack(reserved, cleanups);
  const { temporal, sim, mon } = stack;
  step(`database ${S.BENCH_DB} (reset + migrated), Redis ${REDIS_URL} (flushed)`);
  // The dev server, or the cluster tier: its processes are the "temporal" CPU group.
  step(`${temporal.describe}; task queue ${TASK_QUEUE}`);
  if (opt['network-latency']) await sim.setLatency({ ms: opt['network-latency'], operation: 'createPost' });
  step(`network simulator in this process at ${stack.simulator.url}`);

  // The accounts the posts go round, and one more for the pilot.
  const { connectedWorkspace } = await import('./harness/seed');
  const person = (i: number) => ({ personId: `bench${i}`, name: `Bench Person ${i}`, vanityName: `bench-person-${i}` });
  const ws = await connectedWorkspace(sim, {
    name: 'Publishing Bench Co',
    accounts: opt.projects + 1,
    person,
    scopes: ['write'],
    keyName: 'publishing bench',
  });
  const s = { workspaceId: ws.id, apiKey: ws.key, projectIds: ws.projectIds.slice(0, -1), pilotProjectId: ws.projectIds.at(-1)! };
  step(`seeded workspace ${s.workspaceId}: ${opt.projects} connected personal-brand project(s) + 1 pilot project, write API key`);

  /** Commits and rows written so far per database (pg_stat_database), the service's and Temporal's. */
  const dbWrites = async (): Promise<Record<string, { commits: number; rows: number }>> => {
    const { rows } = await mon.query<{ datname: string; commits: string; rows: string }>(
      'select datname, xact_commit as commits, tup_inserted + tup_updated + tup_deleted as rows from pg_stat_database where datname = any($1)',
      [[S.BENCH_DB, ...temporal.databases]],
    );
    return Object.fromEntries(rows.map((r) => [r.datname, { commits: Number(r.commits), rows: Number(r.rows) }]));
  };

  let env = {};
  if (opt['worker-bundle'] === 'prebuilt') {
    const t0 = Date.now();
    const bundles = await buildWorkerBundles(RESULTS_DIR, 'publishing');
    step(`workflow bundles built in ${s1(Date.now() - t0)} s; the workers load them (--worker-bundle prebuilt)`);
    // The workers' environment over the bench's (they inherit it): the pre-built bundles.
    env = { WORKFLOW_BUNDLE_PATH: bundles.service, BENCH_BASELINE_BUNDLE_PATH: bundles.baseline };
  }
  const tclient = stack.client;
  return { ...stack, startedAt, config, heapLimitMiB, machine, cleanups, env, s, tclient, dbWrites };
}

// ── Run: the baselines, the workers, the herd created, the drain ─────────────────────────────

export type Fleet = Awaited<ReturnType<typeof startWorkers>>;
export type Creation = Awaited<ReturnType<typeof createPosts>>;
export type Run = Awaited<ReturnType<typeof run>>;

async function run(b: Bench) {
  const baselines = [];
  const sizes = { n: S.POSTS, concurrency: opt.concurrency, workers: opt.workers, deadlineMs: opt.deadline * 1000 };
  for (const kind of S.BASELINE ? (['bare-timer', 'timer+activity'] as const) : []) {
    const r = await runBaseline(b, kind, sizes, (line) => console.log(line.startsWith(' ') ? line : `• ${line}`));
    baselines.push(r);
    step(
      `baseline ${kind}: ${f0(r.completed)}/${f0(r.workflows)} done, drain ${r.drainPerS.toFixed(1)} workflows/s (last ${s1(r.lastAfterDueS * 1000)} s after due), ${lagAndMemory(r)}`,
    );
  }
  const fleet = await startWorkers(b);
  const creation = await createPosts(b, fleet);
  return { baselines, ...fleet, ...creation, ...(await drainPosts(b, { ...fleet, ...creation })) };
}

/** Worker #1, and with --workers N the others (never killed: they keep draining while #1 is down), each polling before the next starts. */
async function startWorkers(bench: Bench) {
  const profDir = (index: number) => path.join(RESULTS_DIR, 'profiles', `${S.RUN_NAME}-worker-${index}`);
  const execArgv = (index: number) => {
    if (!opt['worker-profile']) return [];
    fs.rmSync(profDir(index), { recursive: true, force: true });
    return ['--cpu-prof', `--cpu-prof-dir=${profDir(index)}`];
  };
  const procs = new ServiceProcesses({ name: 'publishing', env: bench.env, execArgv });
  bench.cleanups.push(() => procs.stop());
  while (procs.workers.length < opt.workers) {
    const w = await procs.startWorker();
    await w.waitReady(bench.connection, S.TASK_QUEUE);
    const how = opt['worker-bundle'] === 'prebuilt' ? 'pre-built workflow bundle loaded' : 'workflow bundle built at start-up';
    step(`worker #${w.index} pid ${w.pid} polling after ${s1(w.readyAt! - w.startedAt)} s${w.index === 1 ? ` (${how})` : ''}`);
  }
  return { procs, workers: procs.workers, launch: () => procs.startWorker(), w1: procs.workers[0]! };
}
