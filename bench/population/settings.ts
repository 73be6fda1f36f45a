import { localDateTime, parseInZone } from '../../lib/time';
import { prng, shuffle } from '../harness/content';
import { benchFlags, COUNT } from '../harness/options';
import { temporalKind } from '../harness/temporal';

// The population bench's command line and targets (issue 36, "The sleeping population"), and the population's plan.

export const TARGET = { creation: 0.8, bytes: 2, rssMiB: 600, restart: 2 };

export const opt = benchFlags(
  'population: a month of posts sleeping for many workspaces, every process restarted, the posts due next measured.',
  {
    posts: {
      default: 100000,
      min: 100,
      integer: true,
      help: "scheduled posts: 1 % due within the run, 0.2 % more for the reschedule checks,\nthe rest over the next 30 days, on the hour in their project's zone",
    },
    workspaces: { default: 1000, ...COUNT, arg: 'W', help: 'Zipf-sized workspaces: the largest ~13 % of the posts, 30 accounts' },
    concurrency: { default: 50, ...COUNT, help: "creates (and the bare baseline's starts, and the PATCHes) in flight" },
    'slice-share': { default: 0.01, arg: 'F', help: 'share of the posts in the due slice, half due before the restart, half after' },
    'restart-gap': { default: 3, min: 2, arg: 'MIN', help: 'minutes between the halves of the due slice; every process restarts between' },
    'no-restart': { type: 'boolean', help: 'nothing is restarted between the halves: both are no-restart slices' },
    'no-reschedule': { type: 'boolean', help: 'skip the reschedule (10 %) and unschedule (1 %) phase' },
    'no-baseline': { type: 'boolean', help: 'skip the bare baseline (N workflows sleeping on one timer each)' },
    'drain-deadline': { default: 120, min: 10, arg: 'S', help: 'a post due within the run not published S s after due is lost' },
    temporal: {
      default: 'dev',
      arg: 'dev|cluster',
      help: 'the dev server on a SQLite file (it survives the restart), or the cluster\ntier on Postgres (databases bench_pop_temporal*)',
    },
    tag: { type: 'string', arg: 'NAME', help: 'write bench/results/population-NAME.json instead of population.json' },
    'quiet-wait': { default: 60, arg: 'S', help: 'first wait up to S s for other work to use < 10 % of the machine; 0: do not wait' },
    strict: {
      type: 'boolean',
      help: `exit 1 on a missed target: creation ≥ ${TARGET.creation}× the bare starts, Temporal bytes per post ≤ ${TARGET.bytes}×
        the bare workflow's, worker RSS ≤ ${TARGET.rssMiB} MiB, restart slice p99 ≤ ${TARGET.restart}× the no-restart one's,
        0 lost, 0 duplicated, 0 published after an unschedule or before its new time`,
    },
  },
  `Environment: BENCH_POP_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_pop),
             BENCH_POP_REDIS_URL (default redis://127.0.0.1:6379/7; the database is flushed).`,
);

if (opt['slice-share'] <= 0 || opt['slice-share'] > 0.2) throw new Error('--slice-share must be in (0, 0.2]');
export const KIND = temporalKind(opt.temporal);
export const CLUSTER = KIND === 'cluster';
export const RESTART = !opt['no-restart'];
export const RESCHEDULE = !opt['no-reschedule'];
export const DRAIN_DEADLINE_MS = opt['drain-deadline'] * 1000;

export const DATABASE_URL = process.env.BENCH_POP_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_pop';
export const REDIS_URL = process.env.BENCH_POP_REDIS_URL ?? 'redis://127.0.0.1:6379/7';
export const TASK_QUEUE = 'bench-population';

// The population's shape (bench/README.md "population"), from a seeded PRNG: one size, one month.

/** "value weight, …" as [value, weight] pairs, in that order. */
const weights = <T>(table: string, value: (s: string) => T) =>
  [...table.matchAll(/([^\s,]+) (\d+)/g)].map(([, v, w]) => [value(v!), Number(w)] as [T, number]);

/** Zones of the workspaces, weighted by where a B2B audience on the network sits. */
const ZONES = weights(
  'America/New_York 22, America/Chicago 8, America/Denver 3, America/Los_Angeles 10, America/Sao_Paulo 5, Europe/London 12, ' +
    'Europe/Berlin 9, Europe/Paris 6, Europe/Madrid 3, Asia/Kolkata 8, Asia/Singapore 4, Asia/Tokyo 3, Australia/Sydney 4, UTC 3',
  String,
);
/** Local hours people schedule at, 7:00 to 20:00: the morning peak at 9, lunch, the end of the day. */
const HOURS = weights('7 4, 8 12, 9 30, 10 12, 11 6, 12 12, 13 5, 14 4, 15 4, 16 4, 17 8, 18 4, 19 2, 20 2', Number);
/** Minutes past the hour: mostly :00, then the half and quarter hours. */
const MINUTES = weights('0 72, 30 14, 15 5, 45 5, 10 2, 50 2', Number);

function pick<T>(rand: () => number, table: Array<[T, number]>): T {
  let r = rand() * table.reduce((a, [, w]) => a + w, 0);
  for (const [v, w] of table) if ((r -= w) < 0) return v;
  return table.at(-1)![0];
}

/** `count` workspaces of Zipf size (s = 1, `weight` their share of the posts), each in one zone. */
export function planWorkspaces(count: number) {
  const rand = prng(36);
  const sum = Array.from({ length: count }, (_, i) => 1 / (i + 1)).reduce((a, b) => a + b, 0);
  return Array.from({ length: count }, (_, i) => ({
    index: i,
    weight: 1 / (i + 1) / sum,
    // Accounts follow the workspace's rank, not the post count: 30 for the largest, one for the tail.
    accounts: Math.max(1, Math.min(30, Math.round(30 / (i + 1) ** 0.6))),
    timezone: pick(rand, ZONES),
  }));
}

/** A wall-clock slot 1 to 30 days ahead in `timeZone`, as the instant it names (DST as lib/time reads it). */
export function futureSlot(rand: () => number, timeZone: string, nowMs: number): Date {
  const [y, m, d] = localDateTime(new Date(nowMs), timeZone).date.split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d + 1 + Math.floor(rand() * 30))).toISOString().slice(0, 10);
  const [hh, mm] = [pick(rand, HOURS), pick(rand, MINUTES)].map((n) => String(n).padStart(2, '0'));
  return parseInZone(`${day}T${hh}:${mm}:00`, timeZone);
}

/** Indexes of its workspace and account; a slot of the month (a slice's post gets its due time when created). */
export type PlannedPost = { workspace: number; account: number; dueMs: number };

/** The posts: `sliceShare` of them due within the run (halves A and B), 0.2 % (≥ 10) more for the reschedule checks (C), the rest far. */
export function planPosts(workspaces: ReturnType<typeof planWorkspaces>, total: number, sliceShare: number, nowMs: number) {
  const rand = prng(3600 + total);
  const sliceN = Math.max(20, Math.round(total * sliceShare));
  const cN = Math.max(10, Math.round(total * 0.002));
  const farN = total - sliceN - cN;
  if (farN < 0) throw new Error(`--posts ${total} is too few for the slices (${sliceN + cN})`);
  // The posts split over the workspaces by weight (largest remainder, so the counts add up to the total).
  const exact = workspaces.map((w) => w.weight * total);
  const perWs = exact.map(Math.floor);
  const left = total - perWs.reduce((a, b) => a + b, 0);
  const remainders = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of remainders.slice(0, left)) perWs[i]!++;
  // One list of (workspace, account) in proportion to the workspaces' sizes, shuffled; the
  // slices take their share from the same list, so the large workspaces dominate them too.
  const slots = perWs.flatMap((n, w) => Array.from({ length: n }, (_, i) => ({ workspace: w, account: i % workspaces[w]!.accounts })));
  shuffle(slots, rand);
  const take = (from: number, count: number): PlannedPost[] =>
    slots.slice(from, from + count).map((s) => ({ ...s, dueMs: futureSlot(rand, workspaces[s.workspace]!.timezone, nowMs).getTime() }));
  const half = Math.floor(sliceN / 2);
  // Far: over the next 30 days; A / B: the due slice before / after the restart; C: due within the run, for the reschedule checks.
  return {
    workspaces,
    far: take(0, farN),
    sliceA: take(farN, half),
    sliceB: take(farN + half, sliceN - half),
    sliceC: take(farN + sliceN, cN),
  };
}
