import type { Knex } from 'knex';
import pg from 'pg';
import { advanceRollupBackfill, clearRollupReadyCache } from '../../lib/analytics/rollup';
import { createKnex } from '../../lib/db';
import { f0, s1 } from '../harness/format';
import { summarize, type LatencySummary } from '../harness/load';

// `npm run bench -- reads --backfill`: the hourly rollup's backfill (docs/analytics.md "Deploying
// the rollup") as the migration's first version ran it (one transaction, posts and
// post_metric_state locked) and as the reconciler runs it (online, in steps), each beside writers
// doing what the metrics sync and a publish do; then the rollup against the plain aggregate.

/** What the rollup holds, from the posts: per project and UTC hour of publishing, the published posts and their metrics' sums. */
const PLAIN = `
  select p.workspace_id, p.project_id, date_trunc('hour', p.published_at at time zone 'UTC') at time zone 'UTC' as hour,
         count(*)::int as posts, coalesce(sum(m.impressions), 0)::bigint as impressions, coalesce(sum(m.reactions), 0)::bigint as reactions,
         coalesce(sum(m.comments), 0)::bigint as comments, coalesce(sum(m.reshares), 0)::bigint as reshares
    from posts p left join post_metric_state m on m.post_id = p.id
   where p.status = 'published' and p.project_id is not null and p.published_at is not null
   group by 1, 2, 3`;
const SUMS = 'workspace_id, project_id, hour, posts, impressions, reactions, comments, reshares';

/** The state a migration leaves on a database with posts: nothing counted, everything to backfill. */
const takeBack = (k: Knex) =>
  k.transaction(async (t) => {
    await t.raw(`select set_config('rollup.backfill', 'on', true)`);
    await t.raw(
      `update rollup_backfills set through_id = null, counted = 0, done_at = null, started_at = now() where name = 'post_publish_hours'`,
    );
    await t.raw('truncate post_publish_hours');
    await t.raw('update post_metric_state set counted_at = null where counted_at is not null');
  });

/** The first version's backfill: one transaction holding writes to posts and their metrics back. */
const underLock = (k: Knex) =>
  k.transaction(async (t) => {
    await t.raw('lock table posts, post_metric_state in share row exclusive mode');
    await t.raw(`select set_config('rollup.backfill', 'on', true)`);
    await t.raw(`
      update post_metric_state m set counted_at = p.published_at from posts p
       where p.id = m.post_id and p.status = 'published' and p.project_id is not null and p.published_at is not null`);
    await t.raw(`insert into post_publish_hours (${SUMS}) ${PLAIN}`);
    await t.raw(`update rollup_backfills set done_at = now() where name = 'post_publish_hours'`);
  });

/** `connections` writers, each in turn a metrics write (the sync) and a published post moved by 1 ms (a trigger on posts), until stopped. */
function writers(url: string, connections: number, postIds: string[]) {
  const pool = new pg.Pool({ connectionString: url, max: connections });
  const latencies: number[] = [];
  let stop = false;
  const loops = Array.from({ length: connections }, async (_, c) => {
    for (let i = c; !stop; i += connections) {
      const id = postIds[(i * 7919) % postIds.length]!;
      const t = performance.now();
      await (i % 2
        ? pool.query('update post_metric_state set impressions = impressions + 1 where post_id = $1', [id])
        : pool.query(`update posts set published_at = published_at + interval '1 millisecond' where id = $1`, [id]));
      latencies.push(performance.now() - t);
    }
  });
  return async (): Promise<LatencySummary> => {
    stop = true;
    await Promise.all(loops);
    await pool.end();
    return summarize(latencies);
  };
}

const writes = (w: LatencySummary) =>
  `writers p50 ${w.p50.toFixed(1)} ms, p99 ${w.p99.toFixed(1)} ms, max ${f0(w.max)} ms (${f0(w.count)} writes)`;

export async function measureBackfill(url: string, label: string, { connections = 4, quietMs = 5_000 } = {}) {
  const k = createKnex(url);
  const figures: Record<string, unknown> = {};
  try {
    const { rows } = await k.raw(
      `select id from posts where status = 'published' and project_id is not null order by random() limit 20000`,
    );
    const postIds = rows.map((r: { id: string }) => r.id);
    // The writers alone first: what a write costs with no backfill beside it.
    const quiet = writers(url, connections, postIds);
    await new Promise((r) => setTimeout(r, quietMs));
    const alone = (figures.alone = await quiet());
    console.log(`  writers alone: ${writes(alone)}`);

    for (const mode of ['under a lock (the migration’s first version)', 'online, in steps (the reconciler)'] as const) {
      await takeBack(k);
      clearRollupReadyCache();
      const stopWriters = writers(url, connections, postIds);
      const t = performance.now();
      let [deferred, counted] = [0, 0];
      if (mode.startsWith('under')) await underLock(k);
      else
        for (let done = false; !done;) {
          const p = await advanceRollupBackfill(k, { budgetMs: 60_000 });
          [deferred, counted, done] = [deferred + p.deferred, counted + p.counted, p.done];
        }
      const seconds = (performance.now() - t) / 1000;
      const during = await stopWriters();
      figures[mode] = { seconds, writers: during, deferred, counted };
      console.log(
        `reads backfill at ${label}, ${mode}: ${s1(seconds * 1000)} s${counted ? ` (${f0(counted)} posts read, ${f0(counted / seconds)}/s, ${deferred} steps deferred)` : ''}; ${writes(during)}`,
      );
    }
    const [check] = (
      await k.raw(`
        with plain as (${PLAIN}), kept as (select ${SUMS} from post_publish_hours)
        select (select count(*) from (table plain except table kept) a) + (select count(*) from (table kept except table plain) b) as differing,
               (select count(*) from post_metric_state m join posts p on p.id = m.post_id
                 where m.counted_at is distinct from case when p.status = 'published' and p.project_id is not null then p.published_at end) as miscounted`)
    ).rows;
    figures.differingBuckets = Number(check.differing);
    figures.miscountedRows = Number(check.miscounted);
    console.log(
      `reads backfill at ${label}: after writes throughout, buckets differing from the plain aggregate: ${figures.differingBuckets}; metrics rows marked wrong: ${figures.miscountedRows}`,
    );
    return figures;
  } finally {
    await k.destroy();
  }
}
