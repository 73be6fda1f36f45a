import path from 'node:path';
import v8 from 'node:v8';
import { benchOptions, numberOption } from '../harness/options';
import { temporalKind } from '../harness/temporal';
import { DEFAULT_WORKER_HEAP_MIB, workerHeapArg } from '../../lib/workerHeap';

// The publishing bench's settings: its command line, its targets, the worker's tunables as the
// worker will read them (set in the environment here, before any app module is loaded).

export const TARGET_P99_S = 30;
// Issue 19's targets, as ratios to the bare baselines measured in the same run.
export const TARGET_DRAIN_VS_TIMER_ACTIVITY = 0.8;
export const AIM_DRAIN_VS_BARE_TIMER = 0.6;
export const TARGET_P99_VS_BASELINE = 1.5;
export const TARGET_PEAK_RSS_MIB = 600;
export const TARGET_STEADY_P99_S = 2;

export const opt = benchOptions(
  {
    mode: { type: 'string', default: 'burst' },
    rate: { type: 'string', default: '1000' },
    minutes: { type: 'string', default: '10' },
    'no-baseline': { type: 'boolean', default: false },
    posts: { type: 'string', default: '10000' },
    projects: { type: 'string', default: '100' },
    create: { type: 'string', default: 'api' },
    concurrency: { type: 'string', default: '50' },
    pilot: { type: 'string', default: '300' },
    margin: { type: 'string', default: '30' },
    spread: { type: 'string', default: '0' },
    'kill-at': { type: 'string', default: '0.3' },
    'kill-fallback': { type: 'string', default: '150' },
    'restart-delay': { type: 'string', default: '2' },
    'no-kill': { type: 'boolean', default: false },
    deadline: { type: 'string', default: '900' },
    'network-latency': { type: 'string', default: '0' },
    'activity-concurrency': { type: 'string' },
    'workflow-concurrency': { type: 'string' },
    'worker-heap': { type: 'string' },
    'max-cached': { type: 'string' },
    'worker-bundle': { type: 'string', default: 'prebuilt' },
    'db-pool': { type: 'string' },
    'worker-profile': { type: 'boolean', default: false },
    'history-sample': { type: 'string', default: 'all' },
    'late-after': { type: 'string', default: '300' },
    tag: { type: 'string' },
    'quiet-wait': { type: 'string', default: '300' },
    'dump-histories': { type: 'string', default: '5' },
    strict: { type: 'boolean', default: false },
    temporal: { type: 'string', default: 'dev' },
    workers: { type: 'string', default: '1' },
  },
  () => `publishing: N posts due in the same minute, the worker SIGKILLed and restarted mid-run.

Options:
  --mode burst|steady       burst (default): every post due the same instant, the worker killed,
                            after the two bare baselines (below). steady: --rate posts a minute
                            evenly spread over --minutes, no kill, no baseline
  --rate N                  steady: posts a minute (default 1000)
  --minutes N               steady: minutes of due times (default 10)
  --no-baseline             burst: skip the bare baselines (one durable timer per workflow; one
                            timer + one activity doing one UPDATE), run first on the same dev
                            server with the same worker settings, --posts workflows each
  --posts N                 posts due in the one minute (default 10000)
  --projects N              connected accounts (personal-brand projects) they are spread over,
                            round robin (default 100; 1 = every post on one account)
  --create api|in-process   create through POST /v1/posts on a real API process (default), or
                            in this process through the same code (insertPost in a transaction,
                            then afterPostCommitted → signalWithStart)
  --concurrency N           creates in flight (default 50)
  --pilot N                 posts created first (in a separate project, due in 7 days) to
                            measure the create rate and warm up (default 300)
  --margin S                the due minute starts at least 2 × the pilot's estimate of the creation
                            time + S seconds from now (default 30), rounded up to :00
  --spread S                spread the due times over S seconds from :00 (default 0: every post
                            at hh:mm:00.000)
  --kill-at F               SIGKILL the worker when this share is published (default 0.3)
  --kill-fallback S         ... or S seconds after the due time, whichever comes first (default 150)
  --restart-delay S         seconds between the kill and the restart (default 2)
  --no-kill                 no kill: a baseline run
  --late-after S            a post published more than S seconds after its due time is late (default 300)
  --deadline S              stop waiting S seconds after the due time; a post not published by
                            then is lost (default 900)
  --network-latency MS      latency the simulator adds to every createPost call (default 0)
  --activity-concurrency N  WORKER_ACTIVITY_CONCURRENCY for the worker (app default 100)
  --workflow-concurrency N  WORKER_WORKFLOW_CONCURRENCY for the worker (app default 100)
  --db-pool N               DB_POOL_MAX for the worker and the API (Postgres connections per process)
  --max-cached N            WORKER_MAX_CACHED_WORKFLOWS for the worker (app default 300: the sticky
                            cache of workflows, about 1 MiB each)
  --worker-heap MiB         run the worker with --max-old-space-size=MiB (default: WORKER_HEAP_MIB,
                            1024, as npm run start:worker does; 0 = Node's own limit)
  --worker-bundle prebuilt|source
                            prebuilt (default): the workers load a workflow bundle the bench builds
                            before they start, as production workers load the build's
                            (WORKFLOW_BUNDLE_PATH, Dockerfile); source: each worker bundles the
                            workflow source with webpack at start-up, as in development
  --worker-profile          run the worker(s) with --cpu-prof; the profile of the worker that is
                            still running at the end is cut to the drain and summarized (µs/post)
  --history-sample N|all    publish workflows whose history is read for the lag breakdown (default all)
  --tag NAME                write bench/results/publishing-NAME.json instead of publishing.json
  --dump-histories N        write N of the sampled publish workflow histories (compact) to
                            bench/results/publishing[-NAME].histories.json (default 5)
  --quiet-wait S            before starting, wait up to S seconds for other processes to use
                            < 10% of the machine (default 300; 0 = do not wait)
  --temporal dev|cluster    the Temporal dev server in memory (default) or the cluster tier: the
                            server as frontend, history, matching and worker processes on Postgres
                            (tooling/temporalCluster.ts, databases bench_pub_temporal*); the
                            baselines run on the same one
  --workers N               worker processes (default 1); the kill takes worker #1, the others keep
                            draining; each baseline runs on as many
  --strict                  exit 1 when a target is missed: 0 lost, 0 duplicated, and in burst mode
                            drain ≥ ${TARGET_DRAIN_VS_TIMER_ACTIVITY}× the timer+activity baseline, p99 lag ≤ ${TARGET_P99_VS_BASELINE}× its p99 (without
                            a baseline: p99 < ${TARGET_P99_S} s), worker peak RSS ≤ ${TARGET_PEAK_RSS_MIB} MiB; in steady mode
                            p99 lag ≤ ${TARGET_STEADY_P99_S} s and worker RSS flat

Environment: BENCH_PUB_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_pub),
             BENCH_PUB_REDIS_URL (default redis://127.0.0.1:6379/13; the database is flushed).`,
);

const num = (name: keyof typeof opt, o?: { min?: number; integer?: boolean }) => numberOption(opt, name, o);
export const MODE = opt.mode as 'burst' | 'steady';
if (MODE !== 'burst' && MODE !== 'steady') throw new Error('--mode must be burst or steady');
export const STEADY = MODE === 'steady';
export const STEADY_MINUTES = num('minutes', { min: 0.1 });
export const POSTS = STEADY ? Math.round(num('rate', { min: 1 }) * STEADY_MINUTES) : num('posts', { min: 1, integer: true });
export const BASELINE = !STEADY && !opt['no-baseline'];
export const PROJECTS = num('projects', { min: 1, integer: true });
export const CREATE = opt.create as 'api' | 'in-process';
if (CREATE !== 'api' && CREATE !== 'in-process') throw new Error('--create must be api or in-process');
export const CONCURRENCY = num('concurrency', { min: 1, integer: true });
export const PILOT = num('pilot', { min: 10, integer: true });
export const MARGIN_MS = num('margin') * 1000;
export const SPREAD_MS = STEADY ? STEADY_MINUTES * 60_000 : num('spread') * 1000;
export const KILL_AT = num('kill-at');
export const KILL_FALLBACK_MS = num('kill-fallback') * 1000;
export const RESTART_DELAY_MS = num('restart-delay') * 1000;
export const KILL = !STEADY && !opt['no-kill'];
export const DEADLINE_MS = num('deadline', { min: 1 }) * 1000;
export const NETWORK_LATENCY_MS = num('network-latency', { integer: true });
export const HISTORY_SAMPLE = opt['history-sample'] === 'all' ? Infinity : num('history-sample', { integer: true });
export const LATE_AFTER_MS = num('late-after', { min: 1 }) * 1000;
export const QUIET_WAIT_MS = num('quiet-wait') * 1000;
export const DUMP_HISTORIES = num('dump-histories', { integer: true });
export const CLUSTER = temporalKind(opt.temporal) === 'cluster';
export const WORKER_COUNT = num('workers', { min: 1, integer: true });

export const DATABASE_URL = process.env.BENCH_PUB_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_pub';
export const REDIS_URL = process.env.BENCH_PUB_REDIS_URL ?? 'redis://127.0.0.1:6379/13';
export const BENCH_DB = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
export const TASK_QUEUE = 'bench-publishing';
if (opt['activity-concurrency']) process.env.WORKER_ACTIVITY_CONCURRENCY = String(num('activity-concurrency', { min: 1, integer: true }));
if (opt['db-pool']) process.env.DB_POOL_MAX = String(num('db-pool', { min: 1, integer: true }));
if (opt['workflow-concurrency']) process.env.WORKER_WORKFLOW_CONCURRENCY = String(num('workflow-concurrency', { min: 2, integer: true }));
export const WORKER_PROFILE = opt['worker-profile'];
if (opt['worker-heap']) {
  const heap = num('worker-heap', { integer: true });
  if (heap !== 0 && heap < 256) throw new Error('--worker-heap must be 0 or a number ≥ 256');
  process.env.WORKER_HEAP_MIB = String(heap);
}
// The worker's heap limit as `npm run start:worker` sets it (lib/config worker.heapMiB,
// WORKER_HEAP_MIB; 0 = Node's own limit).
export const WORKER_HEAP_MIB = Number(process.env.WORKER_HEAP_MIB || DEFAULT_WORKER_HEAP_MIB);
export const WORKER_BUNDLE = opt['worker-bundle'];
if (WORKER_BUNDLE !== 'prebuilt' && WORKER_BUNDLE !== 'source') {
  console.error(`--worker-bundle must be prebuilt or source, not ${WORKER_BUNDLE}`);
  process.exit(2);
}
// The worker's environment: the bench's, plus a heap limit when asked (NODE_OPTIONS reaches only
// the worker) and the pre-built bundles.
export const workerEnv = (bundlePaths: { service: string; baseline: string } | null): NodeJS.ProcessEnv => ({
  ...process.env,
  ...(WORKER_HEAP_MIB > 0 ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${workerHeapArg(WORKER_HEAP_MIB)}`.trim() } : {}),
  ...(bundlePaths ? { WORKFLOW_BUNDLE_PATH: bundlePaths.service, BENCH_BASELINE_BUNDLE_PATH: bundlePaths.baseline } : {}),
});
export const heapLimitMiB = WORKER_HEAP_MIB || v8.getHeapStatistics().heap_size_limit / 1024 / 1024;
if (opt['max-cached']) process.env.WORKER_MAX_CACHED_WORKFLOWS = String(num('max-cached', { min: 0, integer: true }));
// The worker's sticky cache (lib/config worker.maxCachedWorkflows, WORKER_MAX_CACHED_WORKFLOWS).
export const MAX_CACHED_WORKFLOWS = Number(process.env.WORKER_MAX_CACHED_WORKFLOWS || 300);
export const ACTIVITY_CONCURRENCY = Number(process.env.WORKER_ACTIVITY_CONCURRENCY ?? 100);
export const WORKFLOW_CONCURRENCY = Number(process.env.WORKER_WORKFLOW_CONCURRENCY ?? 100);

/** The settings a run's results file records (bench/publishing/report.ts adds the run's due time and pool size). */
export const RESULT_SETTINGS = {
  posts: POSTS,
  projects: PROJECTS,
  create: CREATE,
  createConcurrency: CONCURRENCY,
  pilot: PILOT,
  marginS: MARGIN_MS / 1000,
  spreadS: SPREAD_MS / 1000,
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
  publishDelaySeconds: 0,
  temporal: CLUSTER ? 'cluster tier: frontend, history, matching, worker processes on Postgres' : 'dev server, in memory',
  workers: WORKER_COUNT,
  database: BENCH_DB,
  redisDb: new URL(REDIS_URL).pathname.slice(1) || '0',
  taskQueue: TASK_QUEUE,
};
