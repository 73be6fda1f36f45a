import path from 'node:path';
import { machineInfo } from '../harness/proc';
import { REPO_ROOT } from '../harness/servers';
import { benchOptions } from '../harness/options';

// The posts-list bench's command line and environment: set before the first app module loads (lib/config reads it once).

export const TARGETS = { minRatio: 0.8, maxP99MsAtRate: 25 };
// Far above anything this machine can send in a 60 s window: the limiter still runs its Redis
// script on every request (its cost is part of what we measure) but never answers 429.
export const RATE_LIMIT_READ = '10000000';

export const opt = benchOptions(
  {
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    rate: { type: 'string', default: '200' },
    'rate-duration': { type: 'string', default: '20' },
    posts: { type: 'string', default: '5000' },
    profile: { type: 'boolean', default: false },
    ablation: { type: 'boolean', default: false },
    'profile-survivors': { type: 'boolean', default: false },
    stages: { type: 'boolean', default: false },
    strict: { type: 'boolean', default: false },
    'quiet-wait': { type: 'string', default: '120' },
    retries: { type: 'string', default: '3' },
    'server-node-options': { type: 'string', default: '' },
  },
  `posts-list: GET /v1/posts?limit=50, real app vs bare Koa + pg.

Options:
  --connections N     closed-loop keep-alive connections (default 32)
  --duration S        seconds per closed-loop measurement (default 15)
  --warmup S          seconds of warm-up before each measurement (default 5)
  --rounds N          closed-loop rounds; servers alternate order ABBA… (default 2)
  --rate R            open-loop requests/s against the real app (default 200)
  --rate-duration S   seconds of the open-loop measurement (default 20)
  --posts N           posts seeded in the benchmarked project (default 5000)
  --profile           profile both servers during one closed-loop run each (figures carry
                      profiler overhead; written to posts-list.profile.json) + stage timings
  --profile-survivors with --profile: the allocation profile keeps only what survived
                      young-generation collections (copied or promoted by scavenges), by site
  --ablation          also measure the bare server with one piece of the real path added at a
                      time (rate limiter, project lookup, knex, the listPosts handler)
  --stages            time each step of the request inside the app process, unloaded
  --strict            exit 1 when a target is missed
  --server-node-options="FLAGS"
                      extra Node flags for every server process, e.g.
                      --server-node-options=--max-semi-space-size=64 (note the "=")
                      (for trying runtime settings; the same flags go to both servers)
  --quiet-wait S      before each measurement, wait up to S seconds for other processes to
                      use < 10% of the machine (default 120; 0 = do not wait)
  --retries N         repeat a measurement during which other processes took ≥ 10% of the
                      machine, up to N times, keeping the cleanest (default 3; not with --profile)

Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench),
             BENCH_REDIS_URL (default redis://127.0.0.1:6379/14; the database is flushed).`,
);

export const num = (name: keyof typeof opt) => {
  const n = Number(opt[name]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
  return n;
};
export const CONNECTIONS = num('connections');
export const DURATION_MS = num('duration') * 1000;
export const WARMUP_MS = num('warmup') * 1000;
export const ROUNDS = opt.profile ? 1 : num('rounds');
export const RATE = num('rate');
export const RATE_DURATION_MS = num('rate-duration') * 1000;
export const POSTS = Math.round(num('posts'));
export const QUIET_WAIT_MS = Number(opt['quiet-wait']) * 1000;
export const QUIET_THRESHOLD = 0.1;
// Split on spaces: Node flags never contain any.
export const SERVER_NODE_ARGS = String(opt['server-node-options']).split(' ').filter(Boolean);
export const RETRIES = opt.profile ? 0 : Math.max(0, Math.round(Number(opt.retries)));

export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';
export const BENCH_DB = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');

// lib/config reads the environment once, at import: everything the app modules (in this
// process for seeding, and in the forked server) must see is set before the first import.
Object.assign(process.env, {
  DATABASE_URL,
  REDIS_URL,
  RATE_LIMIT_READ,
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  // Both servers run as they would in production; Koa and libraries branch on it.
  NODE_ENV: 'production',
});

export const CPUS = machineInfo().cpus;

/** The settings a run's results file records. */
export const RESULT_SETTINGS = {
  serverNodeOptions: SERVER_NODE_ARGS,
  connections: CONNECTIONS,
  durationS: DURATION_MS / 1000,
  warmupS: WARMUP_MS / 1000,
  rounds: ROUNDS,
  rate: RATE,
  rateDurationS: RATE_DURATION_MS / 1000,
  rateLimitRead: Number(RATE_LIMIT_READ),
  authCacheMs: Number(process.env.AUTH_CACHE_MS ?? 4000),
  database: 'content_scheduler_bench',
  redisDb: new URL(REDIS_URL).pathname.slice(1) || '0',
};
