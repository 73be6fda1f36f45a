import type { Knex } from 'knex';
import { config } from '../config';
import { db, isoOf, readPrepared, shapedRead, TIMESTAMPS_AS_ISO } from '../db';
import { Post, PostMetricDay, PostMetricState, PostPublishHour, Project, type Reach } from '../models';
import { rollupReady } from './rollup';
import { parseInZone } from '../time';

// The analytics overview of one project (docs/analytics.md "Overview"): totals of the posts
// published in the period with their latest metrics, the same for the previous period of equal
// length and the change, daily gains from the metrics time series, best posts, posting cadence
// and the best times to post from the project's own history.

const DAY_MS = 86_400_000;
export const addDays = (ymd: string, n: number) => new Date(Date.parse(`${ymd}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
export const daysBetween = (from: string, to: string) =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;

export function localDate(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

export interface Totals {
  posts: number;
  impressions: number;
  reactions: number;
  comments: number;
  reshares: number;
  engagements: number;
  engagementRate: number;
}

const rate = (engagements: number, impressions: number) =>
  impressions > 0 ? Math.round((engagements / impressions) * 10_000) / 10_000 : 0;

const n = (v: number | string | null) => Number(v ?? 0);

export function totalsOf(r: {
  posts: number | string;
  impressions: number | string | null;
  reactions: number | string | null;
  comments: number | string | null;
  reshares: number | string | null;
}): Totals {
  const engagements = n(r.reactions) + n(r.comments) + n(r.reshares);
  return {
    posts: n(r.posts),
    impressions: n(r.impressions),
    reactions: n(r.reactions),
    comments: n(r.comments),
    reshares: n(r.reshares),
    engagements,
    engagementRate: rate(engagements, n(r.impressions)),
  };
}

export interface PostRowFigures {
  id: string;
  title: string;
  /** A Date, or the ISO string of a read with TIMESTAMPS_AS_ISO (lib/db.ts). */
  published_at: Date | string;
  impressions: number | string | null;
  reactions: number | string | null;
  comments: number | string | null;
  reshares: number | string | null;
}

/**
 * One published post's figures as the analytics answers show them (overview's best posts, the
 * per-post list): totalsOf's figures but the count, written out as one literal. Not spread from
 * totalsOf: on this Node, a literal that spreads an object and adds properties after it costs
 * microseconds apiece (each gets a shape of its own, and JSON.stringify slows on it), which for
 * a page of 50 was the largest piece of the per-post list's own CPU (bench/README.md, reads).
 */
export function postFigures(r: PostRowFigures) {
  const engagements = n(r.reactions) + n(r.comments) + n(r.reshares);
  return {
    postId: r.id,
    title: r.title,
    publishedAt: isoOf(r.published_at),
    impressions: n(r.impressions),
    reactions: n(r.reactions),
    comments: n(r.comments),
    reshares: n(r.reshares),
    engagements,
    engagementRate: rate(engagements, n(r.impressions)),
  };
}

const change = (now: number, before: number) => (before === 0 ? null : Math.round(((now - before) / before) * 10_000) / 10_000);

/** The instants bounding calendar days [from, to] in `timeZone`. */
export function periodBounds(from: string, to: string, timeZone: string): { start: Date; end: Date } {
  return { start: parseInZone(`${from}T00:00:00`, timeZone), end: parseInZone(`${addDays(to, 1)}T00:00:00`, timeZone) };
}

const HOUR_MS = 3_600_000;
/** The UTC hours (their starts) that hold an instant of [start, end). */
const hoursOf = (start: Date, end: Date) =>
  Array.from(
    { length: Math.ceil((end.getTime() - start.getTime()) / HOUR_MS) + 1 },
    (_, i) => new Date(Math.floor(start.getTime() / HOUR_MS) * HOUR_MS + i * HOUR_MS),
  ).filter((h) => h < end);
const METRICS = ['impressions', 'reactions', 'comments', 'reshares'] as const;
type Sums = { posts: number } & Record<(typeof METRICS)[number], number>;

/**
 * For each reader, the projects it sees and the totals of their posts published from `start`
 * until before `end`, with their latest metrics, read from the hourly rollup
 * (post_publish_hours: one row per project and hour with posts, however many posts it holds).
 * One statement for any number of readers (Project.visibleToAny); a reader without a project
 * has none. The bounds must be whole UTC hours (the cross-workspace overview reads UTC days); a
 * bound inside an hour would need that hour's posts, which only the project overview's
 * `periodsByDay` reads.
 */
export async function periodTotals(
  k: Knex,
  reaches: readonly Reach[],
  start: Date,
  end: Date,
): Promise<Map<string, { projects: number; totals: Totals }>> {
  if (start.getTime() % HOUR_MS !== 0 || end.getTime() % HOUR_MS !== 0) {
    throw new Error('periodTotals: the period must begin and end on whole UTC hours');
  }
  const rows = await readPrepared<Parameters<typeof totalsOf>[0] & { workspace_id: string; projects: string }>(
    Project.visibleToAny(reaches, k)
      .alias('p')
      .toKnexQuery()
      .clearSelect()
      // Each project's hours summed apart (one probe of the rollup's key), then its workspace's;
      // while the rollup is backfilled, each project's posts of the period.
      .joinRaw(
        (await rollupReady(k))
          ? `left join lateral (select ${['posts', ...METRICS].map((m) => `sum(r.${m}) as ${m}`).join(', ')}
               from ${PostPublishHour.tableName} r
              where r.workspace_id = p.workspace_id and r.project_id = p.id and r.hour >= ? and r.hour < ?) t on true`
          : `left join lateral (select count(*) as posts, ${METRICS.map((m) => `sum(s.${m}) as ${m}`).join(', ')}
               from ${Post.tableName} q left join ${PostMetricState.tableName} s on s.post_id = q.id
              where q.workspace_id = p.workspace_id and q.project_id = p.id and q.status = 'published'
                and q.published_at >= ? and q.published_at < ?) t on true`,
        [start, end],
      )
      .groupBy('p.workspace_id')
      .select(
        'p.workspace_id',
        k.raw('count(*) as projects'),
        k.raw('coalesce(sum(t.posts), 0) as posts'),
        ...METRICS.map((m) => k.raw(`sum(t.${m}) as ${m}`)),
      ),
  );
  const none = totalsOf({ posts: 0, impressions: 0, reactions: 0, comments: 0, reshares: 0 });
  const byWorkspace = new Map(reaches.map((r) => [r.workspaceId, { projects: 0, totals: none }]));
  for (const row of rows) byWorkspace.set(row.workspace_id, { projects: Number(row.projects), totals: totalsOf(row) });
  return byWorkspace;
}

/** The local day of the instant `at` in the current period (its `?`s: `start`, then `timeZone`); null before `start`. */
const localDay = (at: string) => `case when ${at} >= ? then (${at} at time zone ?)::date end`;
const sums = (m: string, when = '') => db().raw(`sum(${m})${when} as ${m.replace(/^\w+\./, '')}`);

type PeriodParam = 'workspaceId' | 'projectId' | 'timeZone' | 'since' | 'start' | 'end';

/**
 * periodsByDay's read of the rollup: the periods' hours with posts (those starting after
 * `hourBeforeSince`, `since` less an hour: from the one holding `since`), summed per local day
 * where whole, and the hours a bound or a local midnight cuts. One shape: its values are all params.
 */
const periodHours = shapedRead((_shape: null, param: (name: PeriodParam | 'hourBeforeSince') => string) => {
  const k = db();
  const hours = PostPublishHour.knexForWorkspace(param('workspaceId'), k, 'r')
    .where('r.project_id', param('projectId'))
    .where('r.hour', '>', param('hourBeforeSince'))
    .where('r.hour', '<', param('end'))
    .joinRaw(`cross join lateral (select ${localDay('r.hour')} as day offset 0) d`, [param('start'), param('timeZone')])
    .select(
      'r.hour',
      'r.posts',
      ...METRICS.map((m) => `r.${m}`),
      'd.day',
      k.raw(
        `r.hour >= ? and r.hour + interval '1 hour' <= ?
         and (r.hour + interval '1 hour' <= ? or d.day is not null and d.day = ((r.hour + interval '3599.999999 seconds') at time zone ?)::date) as whole`,
        [param('since'), param('end'), param('start'), param('timeZone')],
      ),
    );
  return k
    .from(hours.as('h'))
    .groupBy('h.day')
    .select(
      k.raw(`to_char(h.day, 'YYYY-MM-DD') as day`),
      ...['h.posts', ...METRICS.map((m) => `h.${m}`)].map((m) => sums(m, ' filter (where h.whole)')),
      k.raw('array_agg(h.hour) filter (where not h.whole) as cut'),
    );
});

/**
 * periodsByDay's read of the cut hours (`cut`, an array of their starts): each one's posts,
 * summed per local day in a lateral aggregate (so that no plan joins the project's posts to the
 * hours at large): its posts from posts_published (the status written into the text, for a
 * generic plan of this prepared statement too), each with its one metrics row by key. The
 * hour's equality, redundant with its range, is for the planner: between two parameters it
 * expects 0.5 % of the project's posts in an hour, with the equality 0.5 % of that, and keeps the
 * plan below the cost at which Postgres compiles it. One shape: its values are all params.
 */
const cutHourSums = shapedRead((_shape: null, param: (name: PeriodParam | 'cut') => string) => {
  const k = db();
  const postMetrics = PostMetricState.knexForWorkspace(param('workspaceId'), k, 's')
    .whereRaw('s.post_id = p.id')
    .limit(1, { skipBinding: true })
    .select(...METRICS.map((m) => `s.${m}`));
  const hourSums = Post.knexForWorkspace(param('workspaceId'), k, 'p')
    .leftJoin(k.raw('lateral ? as s', [postMetrics]), k.raw('true'))
    .where('p.project_id', param('projectId'))
    .whereRaw(`p.status = 'published'`)
    .whereRaw('p.published_at >= greatest(h.hour, ?)', [param('since')])
    .whereRaw(`p.published_at < least(h.hour + interval '1 hour', ?)`, [param('end')])
    .whereRaw(`date_trunc('hour', p.published_at at time zone 'UTC') = h.hour at time zone 'UTC'`)
    .groupBy('day')
    .select(
      k.raw(`to_char(${localDay('p.published_at')}, 'YYYY-MM-DD') as day`, [param('start'), param('timeZone')]),
      k.raw('count(*) as posts'),
      ...METRICS.map((m) => sums(`s.${m}`)),
    );
  return k
    .from(k.raw('unnest(?::timestamptz[]) as h(hour)', [param('cut')]))
    .crossJoin(k.raw('lateral ? as x', [hourSums]))
    .groupBy('x.day')
    .select('x.day', sums('x.posts'), ...METRICS.map((m) => sums(`x.${m}`)));
});

/**
 * The project's posts published from `since` until before `end` and their latest metrics: those
 * before `start` summed (the previous period), those after by local day of `timeZone` (the
 * current one). Read from the hourly rollup (post_publish_hours, kept by triggers: migration
 * 20261203120000), one row per UTC hour with posts, whatever their number. An hour that a bound
 * or a local midnight cuts (a zone whose offset is not whole hours, a DST change inside an hour)
 * is read from its own posts instead, in a second statement sent only when there is such an
 * hour, so the answer is the one a sum over the posts gives: the local day is Postgres' own
 * `at time zone`, as for every other local day of the overview.
 */
async function periodsByDay(k: Knex, workspaceId: string, projectId: string, timeZone: string, since: Date, start: Date, end: Date) {
  type Row = { day: string | null } & Record<keyof Sums, string | null>;
  const ready = await rollupReady(k);
  const whole = !ready
    ? []
    : await readPrepared<Row & { cut: Date[] | null }>(
        periodHours(null, {
          workspaceId,
          projectId,
          timeZone,
          since,
          start,
          end,
          hourBeforeSince: new Date(since.getTime() - HOUR_MS),
        }),
      );
  const rows: Row[] = [...whole];
  // While the rollup is backfilled, every hour of the periods is read as a cut one is.
  const cut = ready ? whole.flatMap((r) => r.cut ?? []) : hoursOf(since, end);
  if (cut.length) {
    rows.push(...(await readPrepared<Row>(cutHourSums(null, { workspaceId, projectId, timeZone, since, start, end, cut }))));
  }

  const zero = (): Sums => ({ posts: 0, impressions: 0, reactions: 0, comments: 0, reshares: 0 });
  const current = zero();
  const previous = zero();
  const postsByDay = new Map<string, number>();
  for (const r of rows) {
    const into = r.day === null ? previous : current;
    for (const key of ['posts', ...METRICS] as const) into[key] += Number(r[key] ?? 0);
    if (r.day !== null) postsByDay.set(r.day, (postsByDay.get(r.day) ?? 0) + Number(r.posts ?? 0));
  }
  return { current: totalsOf(current), previous: totalsOf(previous), postsByDay };
}

const ORDER = (t: string) => `(${t}.reactions + ${t}.comments + ${t}.reshares) desc, ${t}.impressions desc`;

/**
 * bestPosts' read, by shape: whether the rollup is ready. Ready, each UTC day of the period from
 * `firstDay` to `lastDay` gives its best 5 from post_metric_state_best (the day's posts the
 * period's bounds keep); while the rollup is backfilled (counted_at is not yet set everywhere),
 * the period's posts. The limits are written into the text.
 */
const bestPostsRead = shapedRead(
  (ready: boolean, param: (name: 'workspaceId' | 'projectId' | 'start' | 'end' | 'firstDay' | 'lastDay') => string) => {
    const k = db();
    const best = ready
      ? k
          .from(k.raw(`generate_series(?::date, ?::date, interval '1 day') as d(day)`, [param('firstDay'), param('lastDay')]))
          .crossJoin(
            k.raw('lateral ? as b', [
              PostMetricState.knexForWorkspace(param('workspaceId'), k, 'c')
                .where('c.project_id', param('projectId'))
                .whereNotNull('c.counted_at')
                .whereRaw(`(c.counted_at at time zone 'UTC')::date = d.day::date`)
                .where('c.counted_at', '>=', param('start'))
                .where('c.counted_at', '<', param('end'))
                .orderByRaw(`${ORDER('c')}, c.post_id`)
                .limit(5, { skipBinding: true })
                .select('c.post_id', ...METRICS.map((m) => `c.${m}`)),
            ]),
          )
          .orderByRaw(`${ORDER('b')}, b.post_id`)
          .limit(5, { skipBinding: true })
          .select('b.*')
      : PostMetricState.knexForWorkspace(param('workspaceId'), k, 'c')
          .join(k.raw(`${Post.tableName} as q on q.id = c.post_id and q.status = 'published'`))
          .where('q.project_id', param('projectId'))
          .where('q.published_at', '>=', param('start'))
          .where('q.published_at', '<', param('end'))
          .orderByRaw(`${ORDER('c')}, c.post_id`)
          .limit(5, { skipBinding: true })
          .select('c.post_id', ...METRICS.map((m) => `c.${m}`));
    return Post.knexForWorkspace(param('workspaceId'), k, 'p')
      .join(best.as('t'), 't.post_id', 'p.id')
      .orderByRaw(`${ORDER('t')}, p.id`)
      .select('p.id', 'p.title', 'p.published_at', ...METRICS.map((m) => `t.${m}`));
  },
);

/**
 * The 5 posts with the most engagements (ties: more impressions, then the post id) of those
 * published from `start` until before `end`. post_metric_state_best orders each UTC day's
 * counted posts that way (migration 20261203120100): the period's best 5 are among its days'
 * best 5, read five index entries a day (a day the period's bounds cut is read until five of its
 * posts fall inside them).
 */
async function bestPosts(k: Knex, workspaceId: string, projectId: string, start: Date, end: Date) {
  const utcDay = (at: Date) => at.toISOString().slice(0, 10);
  return readPrepared<PostRowFigures>(
    bestPostsRead(await rollupReady(k), {
      workspaceId,
      projectId,
      start,
      end,
      firstDay: utcDay(start),
      lastDay: utcDay(new Date(end.getTime() - 1)),
    }),
    { types: TIMESTAMPS_AS_ISO },
  );
}

/**
 * Best times read the project's latest synced posts, not its whole history: what an audience
 * does now is what the next post meets, and the read costs the same at any history length.
 */
export const BEST_TIMES_POSTS = 1_000;
/** The sync states the overview counts; migration 20261202100000's partial index holds exactly these. */
const ATTENTION_STATES = ['pending', 'blocked', 'failed'];

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;

type ProjectParam = 'workspaceId' | 'projectId';

/** Daily gains from `from` to `to` (local days), maintained by the sync as it writes samples (lib/analytics/sync.ts). */
const dailyGainsRead = shapedRead((_shape: null, param: (name: ProjectParam | 'from' | 'to') => string) =>
  PostMetricDay.knexForWorkspace(param('workspaceId'), db())
    .where({ project_id: param('projectId') })
    .where('day', '>=', param('from'))
    .where('day', '<=', param('to'))
    .select(db().raw(`to_char(day, 'YYYY-MM-DD') as day`), 'impressions', 'reactions', 'comments', 'reshares'),
);

/**
 * Best times: the project's latest BEST_TIMES_POSTS synced posts, by weekday and hour of
 * `timeZone`. The limit and the conditions on the counters are constants of the text. It is
 * planned with each call's values (projectOverview): its generic plan read the project's synced
 * posts through the wrong index at a million posts (103 ms against 5 ms).
 */
const bestTimesRead = shapedRead((_shape: null, param: (name: ProjectParam | 'timeZone') => string) => {
  const k = db();
  return k
    .from(
      PostMetricState.knexForWorkspace(param('workspaceId'), k)
        .where({ project_id: param('projectId') })
        .whereRaw('samples > 0')
        .whereRaw('impressions > 0')
        .orderBy('published_at', 'desc')
        .limit(BEST_TIMES_POSTS, { skipBinding: true })
        .select('published_at', 'reactions', 'comments', 'reshares', 'impressions')
        .as('s'),
    )
    .select(
      k.raw(`extract(dow from s.published_at at time zone ?)::int as dow`, [param('timeZone')]),
      k.raw(`extract(hour from s.published_at at time zone ?)::int as hour`, [param('timeZone')]),
      k.raw('count(*)::int as posts'),
      k.raw('avg((s.reactions + s.comments + s.reshares)::float8 / s.impressions) as rate'),
    )
    .groupBy('dow', 'hour');
});

/**
 * The sync's state: the latest sync (one probe of post_metric_state_synced), and the posts that
 * need attention, counted in post_metric_state_attention, which holds only those: a project's
 * settled history is never read. The states are written into the text, so that a generic plan
 * of this prepared statement can prove the partial index applies.
 */
const syncStateRead = shapedRead((_shape: null, param: (name: ProjectParam) => string) => {
  const k = db();
  return k
    .select(
      k.raw('(?) as last_synced_at', [
        PostMetricState.knexForWorkspace(param('workspaceId'), k)
          .where({ project_id: param('projectId') })
          .max('last_synced_at'),
      ]),
      k.raw(`count(*) filter (where sync_state = 'pending')::int as pending`),
      k.raw(`count(*) filter (where sync_state = 'blocked')::int as blocked`),
      k.raw(`count(*) filter (where sync_state = 'failed')::int as failed`),
      k.raw(`(array_agg(last_error order by last_synced_at desc nulls last) filter (where sync_state = 'blocked'))[1] as blocked_reason`),
    )
    .from(
      PostMetricState.knexForWorkspace(param('workspaceId'), k)
        .where({ project_id: param('projectId') })
        .whereRaw(`sync_state in (${ATTENTION_STATES.map((s) => `'${s}'`).join(', ')})`)
        .select('sync_state', 'last_error', 'last_synced_at')
        .as('a'),
    );
});

export async function projectOverview(project: { id: string; workspace_id: string; timezone: string }, from: string, to: string) {
  const k = db();
  const tz = project.timezone;
  const { start, end } = periodBounds(from, to, tz);
  const days = daysBetween(from, to);
  const prev = periodBounds(addDays(from, -days), addDays(from, -1), tz);
  const workspaceId = project.workspace_id;
  const projectId = project.id;

  const [{ current, previous, postsByDay }, series, best, times, [sync]] = await Promise.all([
    periodsByDay(k, workspaceId, projectId, tz, prev.start, start, end),
    readPrepared<any>(dailyGainsRead(null, { workspaceId, projectId, from, to })),
    bestPosts(k, workspaceId, projectId, start, end),
    // Planned with its values: a generic plan of it read far more (lib/db.ts readPrepared).
    readPrepared<any>(bestTimesRead(null, { workspaceId, projectId, timeZone: tz }), { planEach: true }),
    readPrepared<any>(syncStateRead(null, { workspaceId, projectId })),
  ]);

  const gainsByDay = new Map<string, any>((series as any[]).map((r) => [r.day, r]));
  const daily = [];
  for (let i = 0; i < days; i++) {
    const day = addDays(from, i);
    const g = gainsByDay.get(day);
    daily.push({
      date: day,
      posts: postsByDay.get(day) ?? 0,
      impressions: Number(g?.impressions ?? 0),
      reactions: Number(g?.reactions ?? 0),
      comments: Number(g?.comments ?? 0),
      reshares: Number(g?.reshares ?? 0),
    });
  }
  const weeks = days / 7;
  const activeWeeks = new Set(daily.filter((d) => d.posts > 0).map((d) => Math.floor(daysBetween(from, d.date) / 7))).size;
  const sample = (times as any[]).reduce((n, r) => n + r.posts, 0);
  const minimum = config.analytics.bestTimesMinPosts;

  return {
    projectId: project.id,
    from,
    to,
    timezone: tz,
    totals: current,
    previousPeriod: { from: addDays(from, -days), to: addDays(from, -1), totals: previous },
    trends: {
      posts: change(current.posts, previous.posts),
      impressions: change(current.impressions, previous.impressions),
      reactions: change(current.reactions, previous.reactions),
      comments: change(current.comments, previous.comments),
      reshares: change(current.reshares, previous.reshares),
      engagements: change(current.engagements, previous.engagements),
      // A rate's trend is its difference in points, not a ratio of ratios.
      engagementRate: Math.round((current.engagementRate - previous.engagementRate) * 10_000) / 10_000,
    },
    daily,
    bestPosts: best.map(postFigures),
    cadence: { posts: current.posts, postsPerWeek: Math.round((current.posts / weeks) * 100) / 100, activeWeeks, weeks: Math.ceil(weeks) },
    bestTimes: {
      minimumSample: minimum,
      sampleSize: sample,
      slots:
        sample < minimum
          ? null
          : (times as any[])
              .map((r) => ({
                weekday: WEEKDAYS[r.dow]!,
                hour: r.hour,
                posts: r.posts,
                averageEngagementRate: Math.round(r.rate * 10_000) / 10_000,
              }))
              .sort(
                (a, b) =>
                  b.averageEngagementRate - a.averageEngagementRate ||
                  b.posts - a.posts ||
                  a.weekday.localeCompare(b.weekday) ||
                  a.hour - b.hour,
              )
              .slice(0, 3),
    },
    sync: {
      lastSyncedAt: sync?.last_synced_at ? new Date(sync.last_synced_at).toISOString() : null,
      pendingPosts: sync?.pending ?? 0,
      blockedPosts: sync?.blocked ?? 0,
      failedPosts: sync?.failed ?? 0,
      detail: sync?.blocked
        ? `Metrics of ${sync.blocked} post(s) cannot be synced: ${sync.blocked_reason ?? 'the connection cannot be used'}`
        : null,
    },
  };
}
