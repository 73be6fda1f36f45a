import { machineInfo } from '../harness/proc';
import { benchFlags } from '../harness/options';
import { setBenchEnvironment } from '../harness/database';

// The posts-list bench's command line and environment: set before the first app module loads (lib/config reads it once).

export const TARGETS = { minRatio: 0.8, maxP99MsAtRate: 25 };
// Far above anything this machine can send in a 60 s window: the limiter still runs its Redis
// script on every request (its cost is part of what we measure) but never answers 429.
export const RATE_LIMIT_READ = '10000000';

export const opt = benchFlags(
  'posts-list: GET /v1/posts?limit=50, real app vs bare Koa + pg.',
  {
    connections: { default: 32, min: 1, integer: true, help: 'closed-loop keep-alive connections' },
    duration: { default: 15, min: 0.001, arg: 'S', help: 'seconds per closed-loop measurement' },
    warmup: { default: 5, min: 0.001, arg: 'S', help: 'seconds of warm-up before each measurement' },
    rounds: { default: 2, min: 1, integer: true, help: 'closed-loop rounds; servers alternate order ABBA… (default 2)' },
    rate: { default: 200, min: 0.001, arg: 'R', help: 'open-loop requests/s against the real app' },
    'rate-duration': { default: 20, min: 0.001, arg: 'S', help: 'seconds of the open-loop measurement' },
    posts: { default: 5000, min: 1, integer: true, help: 'posts seeded in the benchmarked project' },
    profile: {
      type: 'boolean',
      help: 'profile both servers during one closed-loop run each (figures carry\nprofiler overhead; written to posts-list.profile.json) + stage timings',
    },
    'profile-survivors': {
      type: 'boolean',
      help: 'with --profile: the allocation profile keeps only what survived\nyoung-generation collections (copied or promoted by scavenges), by site',
    },
    ablation: {
      type: 'boolean',
      help: 'also measure the bare server with one piece of the real path added at a\ntime (rate limiter, project lookup, knex, the listPosts handler)',
    },
    stages: { type: 'boolean', help: 'time each step of the request inside the app process, unloaded' },
    strict: { type: 'boolean', help: 'exit 1 when a target is missed' },
    'server-node-options': {
      default: '',
      arg: '="FLAGS"',
      help: 'extra Node flags for every server process, e.g.\n--server-node-options=--max-semi-space-size=64 (note the "=")\n(for trying runtime settings; the same flags go to both servers)',
    },
    'quiet-wait': {
      default: 120,
      arg: 'S',
      help: 'before each measurement, wait up to S seconds for other processes to\nuse < 10% of the machine (default 120; 0 = do not wait)',
    },
    retries: {
      default: 3,
      integer: true,
      help: 'repeat a measurement during which other processes took ≥ 10% of the\nmachine, up to N times, keeping the cleanest (default 3; not with --profile)',
    },
  },
  `Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench),
             BENCH_REDIS_URL (default redis://127.0.0.1:6379/14; the database is flushed).`,
);

export const DURATION_MS = opt.duration * 1000;
export const WARMUP_MS = opt.warmup * 1000;
export const ROUNDS = opt.profile ? 1 : opt.rounds;
export const RATE_DURATION_MS = opt['rate-duration'] * 1000;
export const QUIET_WAIT_MS = opt['quiet-wait'] * 1000;
export const QUIET_THRESHOLD = 0.1;
// Split on spaces: Node flags never contain any.
export const SERVER_NODE_ARGS = opt['server-node-options'].split(' ').filter(Boolean);
export const RETRIES = opt.profile ? 0 : opt.retries;

export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';
export const BENCH_DB = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));

// lib/config reads the environment once, at import: everything the app modules (in this
// process for seeding, and in the forked server) must see is set before the first import.
// Both servers run as they would in production (NODE_ENV); Koa and libraries branch on it.
setBenchEnvironment(DATABASE_URL, REDIS_URL, { RATE_LIMIT_READ });

export const CPUS = machineInfo().cpus;

/** The settings a run's results file records. */
export const RESULT_SETTINGS = {
  serverNodeOptions: SERVER_NODE_ARGS,
  connections: opt.connections,
  durationS: DURATION_MS / 1000,
  warmupS: WARMUP_MS / 1000,
  rounds: ROUNDS,
  rate: opt.rate,
  rateDurationS: RATE_DURATION_MS / 1000,
  rateLimitRead: Number(RATE_LIMIT_READ),
  authCacheMs: Number(process.env.AUTH_CACHE_MS ?? 4000),
  database: 'content_scheduler_bench',
  redisDb: new URL(REDIS_URL).pathname.slice(1) || '0',
};
