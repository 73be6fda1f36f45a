import path from 'node:path';
import { RESULTS_DIR } from '../harness/format';
import { benchFlags, COUNT, numberOption } from '../harness/options';
import { NO_FAIRNESS_FLAG } from '../harness/stack';
import { temporalKind } from '../harness/temporal';

// The publishing bench's command line and targets; the worker's tunables set in the environment before any app module loads.

// Issue 19's targets: drain and p99 lag as ratios to the bare baselines measured in the same run (p99S without them).
export const TARGET = { drainVsTimerActivity: 0.8, drainVsBareTimerAim: 0.6, p99VsBaseline: 1.5, p99S: 30, peakRssMiB: 600, steadyP99S: 2 };

const worker = (env: string, min = 1) => ({ type: 'number', min, integer: true, help: `${env} for the worker (app default 100)` }) as const;

export const opt = benchFlags(
  'publishing: N posts due in the same minute, the worker SIGKILLed and restarted mid-run.',
  {
    mode: {
      default: 'burst',
      arg: 'burst|steady',
      help: 'burst: all due at one instant, the worker killed, bare baselines first;\nsteady: --rate posts a minute over --minutes, no kill, no baseline',
    },
    rate: { default: 1000, min: 1, help: 'steady: posts a minute' },
    minutes: { default: 10, min: 0.1, help: 'steady: minutes of due times' },
    'no-baseline': { type: 'boolean', help: 'burst: skip the bare baselines run first (a timer; a timer + one UPDATE activity)' },
    posts: { default: 10000, ...COUNT, help: 'posts due in the one minute' },
    projects: { default: 100, ...COUNT, help: 'connected personal-brand accounts the posts go round; 1: all on one' },
    create: { default: 'api', arg: 'api|in-process', help: 'POST /v1/posts on an API process; in-process: insertPost+afterPostCommitted' },
    concurrency: { default: 50, ...COUNT, help: 'creates in flight' },
    pilot: { default: 300, min: 10, integer: true, help: 'posts created first (due in 7 days) to measure the create rate and warm up' },
    margin: { default: 30, arg: 'S', help: "due minute ≥ 1.3 × the pilot's creation estimate + S seconds from now, at :00" },
    spread: { default: 0, arg: 'S', help: 'spread the due times over S s from :00 (default 0: all at hh:mm:00.000)' },
    'kill-at': { default: 0.3, arg: 'F', help: 'SIGKILL the worker when this share is published' },
    'kill-fallback': { default: 150, arg: 'S', help: '... or S seconds after the due time, whichever comes first' },
    'restart-delay': { default: 2, arg: 'S', help: 'seconds between the kill and the restart' },
    'no-kill': { type: 'boolean', help: 'no kill: a baseline run' },
    'late-after': { default: 300, min: 1, arg: 'S', help: 'a post published more than S seconds after its due time is late' },
    deadline: { default: 900, min: 1, arg: 'S', help: 'stop waiting S seconds after due; a post not published by then is lost' },
    'network-latency': { default: 0, integer: true, arg: 'MS', help: 'latency the simulator adds to every createPost call' },
    'activity-concurrency': worker('WORKER_ACTIVITY_CONCURRENCY'),
    'workflow-concurrency': worker('WORKER_WORKFLOW_CONCURRENCY', 2),
    'db-pool': { type: 'number', ...COUNT, help: 'DB_POOL_MAX for the worker and the API (Postgres connections per process)' },
    'max-cached': { type: 'number', integer: true, help: 'WORKER_MAX_CACHED_WORKFLOWS: sticky cache size (app default 300; ~1 MiB each)' },
    'worker-heap': {
      type: 'number',
      integer: true,
      arg: 'MiB',
      help: "the worker's --max-old-space-size (default WORKER_HEAP_MIB: 1024; 0: Node's own limit)",
    },
    'worker-bundle': {
      default: 'prebuilt',
      arg: 'prebuilt|source',
      help: 'prebuilt (default): load a bundle built first, as production; source: each worker runs webpack',
    },
    'worker-profile': { type: 'boolean', help: '--cpu-prof the workers; the one running at the end is profiled over the drain (µs/post)' },
    'history-sample': { default: 'all', arg: 'N|all', help: 'publish workflows whose history is read for the lag breakdown' },
    tag: { arg: 'NAME', help: 'write bench/results/publishing-NAME.json instead of publishing.json' },
    'dump-histories': { default: 5, integer: true, help: 'N compact sampled histories to bench/results/publishing[-NAME].histories.json' },
    'quiet-wait': { default: 300, arg: 'S', help: 'first wait up to S s for other work to use < 10% of the machine; 0: do not wait' },
    temporal: {
      default: 'dev',
      arg: 'dev|cluster',
      help: 'the dev server in memory, or the cluster tier on Postgres (databases\nbench_pub_temporal*); the baselines run on the same',
    },
    'no-fairness': NO_FAIRNESS_FLAG,
    workers: { default: 1, ...COUNT, help: 'worker processes, as many per baseline; the kill takes #1, the others drain on' },
    strict: {
      type: 'boolean',
      help: `exit 1 on a missed target: 0 lost, 0 duplicated; burst: drain ≥ ${TARGET.drainVsTimerActivity}× timer+activity's,
        p99 lag ≤ ${TARGET.p99VsBaseline}× its p99 (no baseline: < ${TARGET.p99S} s), worker peak RSS ≤ ${TARGET.peakRssMiB} MiB;
        steady: p99 lag ≤ ${TARGET.steadyP99S} s, worker RSS flat`,
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
  fairness: !opt['no-fairness'],
};

// The worker's tunables, for the worker (and the API) to read through lib/config.
if (opt['worker-heap'] && opt['worker-heap'] < 256) throw new Error('--worker-heap must be 0 or a number ≥ 256');
const tunables = {
  WORKER_ACTIVITY_CONCURRENCY: opt['activity-concurrency'],
  DB_POOL_MAX: opt['db-pool'],
  WORKER_WORKFLOW_CONCURRENCY: opt['workflow-concurrency'],
  WORKER_HEAP_MIB: opt['worker-heap'],
  WORKER_MAX_CACHED_WORKFLOWS: opt['max-cached'],
};
for (const [name, value] of Object.entries(tunables)) if (value !== undefined) process.env[name] = String(value);
