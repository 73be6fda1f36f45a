import path from 'node:path';
import { RESULTS_DIR } from '../harness/format';
import { benchFlags, numberOption } from '../harness/options';
import { temporalKind } from '../harness/temporal';

// The publishing bench's command line and targets; the worker's tunables set in the environment before any app module loads.

// Issue 19's targets: drain and p99 lag as ratios to the bare baselines measured in the same run (p99S without them).
export const TARGET = { drainVsTimerActivity: 0.8, drainVsBareTimerAim: 0.6, p99VsBaseline: 1.5, p99S: 30, peakRssMiB: 600, steadyP99S: 2 };

export const opt = benchFlags(
  'publishing: N posts due in the same minute, the worker SIGKILLed and restarted mid-run.',
  {
    mode: {
      default: 'burst',
      arg: 'burst|steady',
      help: `burst (default): every post due the same instant, the worker killed,
        after the two bare baselines (below). steady: --rate posts a minute
        evenly spread over --minutes, no kill, no baseline`,
    },
    rate: { default: 1000, min: 1, help: 'steady: posts a minute' },
    minutes: { default: 10, min: 0.1, help: 'steady: minutes of due times' },
    'no-baseline': {
      type: 'boolean',
      help: `burst: skip the bare baselines (one durable timer per workflow; one
        timer + one activity doing one UPDATE), run first on the same dev
        server with the same worker settings, --posts workflows each`,
    },
    posts: { default: 10000, min: 1, integer: true, help: 'posts due in the one minute' },
    projects: {
      default: 100,
      min: 1,
      integer: true,
      help: 'connected accounts (personal-brand projects) the posts go round;\n1: all on one',
    },
    create: {
      default: 'api',
      arg: 'api|in-process',
      help: `create through POST /v1/posts on a real API process (default), or
        in this process through the same code (insertPost in a transaction,
        then afterPostCommitted → signalWithStart)`,
    },
    concurrency: { default: 50, min: 1, integer: true, help: 'creates in flight' },
    pilot: { default: 300, min: 10, integer: true, help: 'posts created first (due in 7 days) to measure the create\nrate and warm up' },
    margin: {
      default: 30,
      arg: 'S',
      help: `the due minute starts at least 1.3 × the pilot's estimate of the creation
        time + S seconds from now (default 30), rounded up to :00`,
    },
    spread: { default: 0, arg: 'S', help: 'spread the due times over S seconds from :00 (default 0: every post\nat hh:mm:00.000)' },
    'kill-at': { default: 0.3, arg: 'F', help: 'SIGKILL the worker when this share is published' },
    'kill-fallback': { default: 150, arg: 'S', help: '... or S seconds after the due time, whichever comes first' },
    'restart-delay': { default: 2, arg: 'S', help: 'seconds between the kill and the restart' },
    'no-kill': { type: 'boolean', help: 'no kill: a baseline run' },
    'late-after': { default: 300, min: 1, arg: 'S', help: 'a post published more than S seconds after its due time is late' },
    deadline: { default: 900, min: 1, arg: 'S', help: 'stop waiting S seconds after due; a post not published by\nthen is lost' },
    'network-latency': { default: 0, integer: true, arg: 'MS', help: 'latency the simulator adds to every createPost call' },
    'activity-concurrency': { type: 'number', min: 1, integer: true, help: 'WORKER_ACTIVITY_CONCURRENCY for the worker (app default 100)' },
    'workflow-concurrency': { type: 'number', min: 2, integer: true, help: 'WORKER_WORKFLOW_CONCURRENCY for the worker (app default 100)' },
    'db-pool': { type: 'number', min: 1, integer: true, help: 'DB_POOL_MAX for the worker and the API (Postgres connections per process)' },
    'max-cached': {
      type: 'number',
      integer: true,
      help: 'WORKER_MAX_CACHED_WORKFLOWS: the sticky cache (app default\n300; ~1 MiB a workflow)',
    },
    'worker-heap': {
      type: 'number',
      integer: true,
      arg: 'MiB',
      help: `run the worker with --max-old-space-size=MiB (default: WORKER_HEAP_MIB,
        1024, as npm run start:worker does; 0 = Node's own limit)`,
    },
    'worker-bundle': {
      default: 'prebuilt',
      arg: 'prebuilt|source',
      help: `prebuilt (default): the workers load a workflow bundle the bench builds
        before they start, as production workers load the build's
        (WORKFLOW_BUNDLE_PATH, Dockerfile); source: each worker bundles the
        workflow source with webpack at start-up, as in development`,
    },
    'worker-profile': {
      type: 'boolean',
      help: `run the worker(s) with --cpu-prof; the profile of the worker that is
        still running at the end is cut to the drain and summarized (µs/post)`,
    },
    'history-sample': { default: 'all', arg: 'N|all', help: 'publish workflows whose history is read for the lag breakdown' },
    tag: { arg: 'NAME', help: 'write bench/results/publishing-NAME.json instead of publishing.json' },
    'dump-histories': {
      default: 5,
      integer: true,
      help: 'N sampled histories, compact, to\nbench/results/publishing[-NAME].histories.json',
    },
    'quiet-wait': { default: 300, arg: 'S', help: 'first wait up to S s for other work to use < 10% of the\nmachine; 0: do not wait' },
    temporal: {
      default: 'dev',
      arg: 'dev|cluster',
      help: `the Temporal dev server in memory (default) or the cluster tier: the
        server as frontend, history, matching and worker processes on Postgres
        (tooling/temporalCluster.ts, databases bench_pub_temporal*); the
        baselines run on the same one`,
    },
    workers: { default: 1, min: 1, integer: true, help: 'worker processes, as many per baseline; the kill takes #1,\nthe others drain on' },
    strict: {
      type: 'boolean',
      help: `exit 1 when a target is missed: 0 lost, 0 duplicated, and in burst mode
        drain ≥ ${TARGET.drainVsTimerActivity}× the timer+activity baseline, p99 lag ≤ ${TARGET.p99VsBaseline}× its p99 (without
        a baseline: p99 < ${TARGET.p99S} s), worker peak RSS ≤ ${TARGET.peakRssMiB} MiB; in steady mode
        p99 lag ≤ ${TARGET.steadyP99S} s and worker RSS flat`,
    },
  },
  `Environment: BENCH_PUB_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_pub),
             BENCH_PUB_REDIS_URL (default redis://127.0.0.1:6379/13; the database is flushed).`,
);

if (opt.mode !== 'burst' && opt.mode !== 'steady') throw new Error('--mode must be burst or steady');
if (opt.create !== 'api' && opt.create !== 'in-process') throw new Error('--create must be api or in-process');
if (opt['worker-bundle'] !== 'prebuilt' && opt['worker-bundle'] !== 'source') throw new Error('--worker-bundle must be prebuilt or source');
export const STEADY = opt.mode === 'steady';
export const POSTS = STEADY ? Math.round(opt.rate * opt.minutes) : opt.posts;
export const BASELINE = !STEADY && !opt['no-baseline'];
export const SPREAD_MS = (STEADY ? opt.minutes * 60 : opt.spread) * 1000;
export const KILL = !STEADY && !opt['no-kill'];
export const PREBUILT = opt['worker-bundle'] === 'prebuilt';
export const HISTORY_SAMPLE = opt['history-sample'] === 'all' ? Infinity : numberOption(opt, 'history-sample', { integer: true });
export const RUN_NAME = `publishing${opt.tag ? `-${opt.tag}` : ''}`;
/** Where worker #index writes its CPU profiles (--worker-profile). */
export const profileDir = (index: number) => path.join(RESULTS_DIR, 'profiles', `${RUN_NAME}-worker-${index}`);

/** The bench's own stores, Temporal and task queue (bench/harness/stack.ts reserveStack). */
export const STACK = {
  kind: temporalKind(opt.temporal),
  databaseUrl: process.env.BENCH_PUB_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_pub',
  redisUrl: process.env.BENCH_PUB_REDIS_URL ?? 'redis://127.0.0.1:6379/13',
  taskQueue: 'bench-publishing',
  clusterDatabase: 'bench_pub_temporal',
  quietWaitS: opt['quiet-wait'],
};

// The worker's tunables, set in the environment for the worker (and the API) to read through lib/config.
if (opt['worker-heap'] && opt['worker-heap'] < 256) throw new Error('--worker-heap must be 0 or a number ≥ 256');
const tunables = {
  WORKER_ACTIVITY_CONCURRENCY: opt['activity-concurrency'],
  DB_POOL_MAX: opt['db-pool'],
  WORKER_WORKFLOW_CONCURRENCY: opt['workflow-concurrency'],
  WORKER_HEAP_MIB: opt['worker-heap'],
  WORKER_MAX_CACHED_WORKFLOWS: opt['max-cached'],
};
for (const [name, value] of Object.entries(tunables)) if (value !== undefined) process.env[name] = String(value);
