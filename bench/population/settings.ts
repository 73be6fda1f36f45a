import { benchFlags } from '../harness/options';
import { temporalKind } from '../harness/temporal';

// The population bench's command line and targets (issue 36, "The sleeping population").

/** Creation ≥ 0.8× the bare starts, Temporal bytes per post ≤ 2× the bare workflow's, worker RSS ≤ 600 MiB, restart slice p99 ≤ 2×. */
export const TARGET = { creation: 0.8, bytes: 2, rssMiB: 600, restart: 2 };

export const opt = benchFlags(
  'population: a month of posts sleeping for many workspaces, every process restarted, the posts due next measured.',
  {
    posts: {
      default: 100000,
      min: 100,
      integer: true,
      help: `scheduled posts in all (default 100000): 1 % fall due within the run (the
        due slice), 0.2 % more within the run for the reschedule checks, the rest
        over the next 30 days, on the hour in their project's zone`,
    },
    workspaces: {
      default: 1000,
      min: 1,
      integer: true,
      arg: 'W',
      help: 'workspaces (default 1000), Zipf-sized: the largest holds ~13 % of the posts\nand 30 accounts, the smallest a handful of posts and one account',
    },
    concurrency: { default: 50, min: 1, integer: true, help: "creates (and the bare baseline's starts, and the PATCHes) in flight" },
    'slice-share': {
      default: 0.01,
      arg: 'F',
      help: 'share of the posts in the due slice (default 0.01); half of it falls due\nbefore the restart (the no-restart slice), half after',
    },
    'restart-gap': {
      default: 3,
      min: 2,
      arg: 'MIN',
      help: 'minutes between the two halves of the due slice (default 3); every process\nis stopped and started again between them',
    },
    'no-restart': { type: 'boolean', help: 'nothing is restarted between the halves: both are no-restart slices' },
    'no-reschedule': { type: 'boolean', help: 'skip the reschedule (10 %) and unschedule (1 %) phase' },
    'no-baseline': { type: 'boolean', help: 'skip the bare baseline (N workflows sleeping on one timer each)' },
    'drain-deadline': {
      default: 120,
      min: 10,
      arg: 'S',
      help: 'a post due within the run and not published S seconds after its due\ntime is lost (default 120)',
    },
    temporal: {
      default: 'dev',
      arg: 'dev|cluster',
      help: `the Temporal dev server on a SQLite file (default; the file survives the
        restart) or the cluster tier on Postgres (databases bench_pop_temporal*)`,
    },
    tag: { type: 'string', arg: 'NAME', help: 'write bench/results/population-NAME.json instead of population.json' },
    'quiet-wait': {
      default: 60,
      arg: 'S',
      help: 'before starting, wait up to S seconds for other processes to use < 10 %\nof the machine (default 60; 0 = do not wait)',
    },
    strict: {
      type: 'boolean',
      help: `exit 1 when a target is missed: creation ≥ ${TARGET.creation}× the bare starts, Temporal bytes
        per sleeping post ≤ ${TARGET.bytes}× the bare workflow's, worker RSS ≤ ${TARGET.rssMiB} MiB,
        restart slice p99 ≤ ${TARGET.restart}× the no-restart slice's, 0 lost, 0 duplicated,
        0 published after an unschedule or before its new time`,
    },
  },
  `Environment: BENCH_POP_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_pop),
             BENCH_POP_REDIS_URL (default redis://127.0.0.1:6379/7; the database is flushed).`,
);

if (opt['slice-share'] <= 0 || opt['slice-share'] > 0.2) throw new Error('--slice-share must be in (0, 0.2]');
export const CLUSTER = temporalKind(opt.temporal) === 'cluster';
export const RESTART = !opt['no-restart'];
export const RESCHEDULE = !opt['no-reschedule'];
export const DRAIN_DEADLINE_MS = opt['drain-deadline'] * 1000;

export const DATABASE_URL = process.env.BENCH_POP_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_pop';
export const REDIS_URL = process.env.BENCH_POP_REDIS_URL ?? 'redis://127.0.0.1:6379/7';
export const BENCH_DB = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
export const TASK_QUEUE = 'bench-population';
export const BASELINE_TASK_QUEUE = 'bench-population-bare';
