// Bench: the analytics reads beside the same statements bare and the minimal query, at two
// project sizes, then the metrics sync through the network simulator (bench/README.md, "analytics").

import { freePort } from '../tooling/ports';
import { closeStores, resetStores, setBenchEnvironment } from './harness/database';
import { s1 } from './harness/format';
import { benchFlags } from './harness/options';
import { measureReads } from './harness/statements';

const opt = benchFlags(
  'analytics: the analytics reads beside the same statements bare and the minimal query, then the metrics sync.',
  {
    posts: { default: '5000,50000', arg: 'N,N', help: 'project sizes the reads are measured at' },
    days: { default: 90, help: 'days of daily metrics samples' },
    duration: { default: 15, arg: 'S', help: 'seconds per measurement' },
    warmup: { default: 3, arg: 'S', help: 'seconds of warm-up per baseline' },
    connections: { default: 8, min: 1, integer: true, help: 'concurrency of every measurement' },
    explain: { type: 'boolean', help: "EXPLAIN (ANALYZE, BUFFERS) of each read's statements and its minimal query" },
    profile: { type: 'boolean', help: "the API process's CPU profile over each read's API run, per call" },
    'sync-posts': { default: 10000, integer: true, help: 'posts synced through the simulator' },
    'no-sync': { type: 'boolean', help: 'the reads only' },
  },
  `Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_analytics),
             BENCH_REDIS_URL (default redis://127.0.0.1:6379/14; the database is flushed).`,
);
const SIZES = opt.posts.split(',').map(Number);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_analytics';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';
// The metrics sync's network: the simulator, started in this process on this port.
const SIM_PORT = await freePort();
setBenchEnvironment(DATABASE_URL, REDIS_URL, { LOG_LEVEL: 'error', NETWORK_API_URL: `http://127.0.0.1:${SIM_PORT}` });

await resetStores(DATABASE_URL, REDIS_URL);
const { db } = await import('../lib/db');
const { benchWorkspace } = await import('./harness/seed');
const person = { name: 'Bench person', timezone: 'Europe/Paris' };
const { workspace, project, key } = await benchWorkspace({
  name: 'Analytics bench',
  project: person,
  scopes: ['analytics:read', 'posts:read'],
});

/**
 * Published posts `from` to `to` of the project, spread over the --days days, and their latest
 * metrics; the first size with a daily sample per post since publishing and the daily gains.
 */
async function insertPosts(from: number, to: number) {
  const t0 = Date.now();
  await db().raw(
    `insert into posts (id, workspace_id, project_id, status, title, content, content_type, network_post_urn, published_at, created_at)
     select 'post_bench' || lpad(i::text, 16, '0'), ?, ?, 'published', 'Bench post ' || i, 'x', 'PERSONAL', 'urn:li:share:' || (1000000 + i),
            now() - (((i * 7919) % (? * 24)) || ' hours')::interval, now() - interval '100 days'
       from generate_series(?::int, ?::int) i`,
    [workspace.id, project.id, opt.days, from, to],
  );
  const state = `insert into post_metric_state (post_id, workspace_id, project_id, network_post_urn, published_at, impressions, reactions, comments, reshares, samples, sync_state, last_synced_at)`;
  const mine = [project.id, `post_bench${String(from - 1).padStart(16, '0')}`];
  if (from > 1) {
    // Past the first size, no samples (`n` days' gain): no read measured here touches them, and the daily-gains rollup has a row per project-day.
    await db().raw(
      `${state}
       select p.id, p.workspace_id, p.project_id, p.network_post_urn, p.published_at, (200 + (hashtext(p.id) & 4095)) * n, (5 + (hashtext(p.id) & 63)) * n,
              (hashtext(p.id) & 7) * n, (hashtext(p.id) & 3) * n, n, 'ok', now() - interval '1 hour'
         from posts p, lateral (select greatest(1, extract(day from now() - p.published_at)::int) as n) d
        where p.project_id = ? and p.id > ?`,
      mine,
    );
    await db().raw('analyze');
    return console.log(`grew the project to ${to} posts in ${s1(Date.now() - t0)} s`);
  }
  await db().raw(
    `insert into post_metric_samples (post_id, workspace_id, project_id, sampled_at, impressions, reactions, comments, reshares)
     select p.id, p.workspace_id, p.project_id, p.published_at + (d || ' days')::interval + interval '1 hour',
            (200 + (hashtext(p.id) & 4095)) * (d + 1), (5 + (hashtext(p.id) & 63)) * (d + 1), (hashtext(p.id) & 7) * (d + 1), (hashtext(p.id) & 3) * (d + 1)
       from posts p cross join generate_series(0, ? - 1) d
      where p.project_id = ? and p.published_at + (d || ' days')::interval + interval '1 hour' < now()`,
    [opt.days, project.id],
  );
  await db().raw(
    `${state}
     select p.id, p.workspace_id, p.project_id, p.network_post_urn, p.published_at, coalesce(l.impressions, 0), coalesce(l.reactions, 0), coalesce(l.comments, 0), coalesce(l.reshares, 0), l.n, 'ok', l.at
       from posts p join lateral (select max(impressions) impressions, max(reactions) reactions, max(comments) comments, max(reshares) reshares, count(*) n, max(sampled_at) at
                                    from post_metric_samples s where s.post_id = p.id) l on true
      where p.project_id = ? and p.id > ?`,
    mine,
  );
  await (await import('../lib/analytics/sync')).rebuildDailyGains(db(), project.id);
  await db().raw('analyze');
  const [{ n }] = (await db().raw('select count(*)::int as n from post_metric_samples')).rows;
  console.log(`seeded ${to} posts, ${n} samples over ${opt.days} days in ${s1(Date.now() - t0)} s`);
}

await insertPosts(1, SIZES[0]!);
// The analytics reads over HTTP at each --posts size, beside the same statements bare and the minimal query.
const { periodBounds, addDays, daysBetween } = await import('../lib/analytics/overview');
const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris' }).format(new Date());
const from = new Date(Date.now() - (opt.days - 1) * 86_400_000).toISOString().slice(0, 10);
const { start, end } = periodBounds(from, today, 'Europe/Paris');
const prevStart = periodBounds(addDays(from, -daysBetween(from, today)), from, 'Europe/Paris').start;
const utc = periodBounds(from, today, 'UTC');
const weekAgo = addDays(today, -6);
const week = periodBounds(weekAgo, today, 'Europe/Paris');
const headers = { authorization: `Bearer ${key}` };
const surfaces = [
  {
    surface: 'analytics overview',
    path: `/v1/analytics/overview?projectId=${project.id}&from=${from}&to=${today}`,
    // One pass over the project's published posts with their latest metrics (post_metric_state;
    // a post not synced yet counts with no metrics, as in the service) for both periods' totals,
    // posts per day, best times, sync state and the five best posts; and the daily-gains rows.
    minimal: {
      text: `with s as materialized (
               select p.id as post_id, p.title, p.published_at, s.impressions, s.reactions, s.comments, s.reshares, s.samples, s.sync_state, s.last_synced_at
                 from posts p left join post_metric_state s on s.post_id = p.id
                where p.workspace_id = $8 and p.project_id = $1 and p.status = 'published'),
             agg as (
               select count(*) filter (where published_at >= $2 and published_at < $3) as posts,
                      sum(impressions) filter (where published_at >= $2 and published_at < $3) as impressions,
                      sum(reactions + comments + reshares) filter (where published_at >= $2 and published_at < $3) as engagements,
                      count(*) filter (where published_at >= $4 and published_at < $2) as prev_posts,
                      sum(impressions) filter (where published_at >= $4 and published_at < $2) as prev_impressions,
                      sum(reactions + comments + reshares) filter (where published_at >= $4 and published_at < $2) as prev_engagements,
                      max(last_synced_at) as last_synced_at, count(*) filter (where sync_state = 'pending') as pending,
                      count(*) filter (where sync_state = 'blocked') as blocked, count(*) filter (where sync_state = 'failed') as failed
                 from s)
           select (select row_to_json(agg) from agg) as totals,
                  (select json_agg(t) from (select extract(dow from published_at at time zone $5)::int as dow, extract(hour from published_at at time zone $5)::int as hour,
                                                   count(*) as posts, avg((reactions + comments + reshares)::float8 / impressions) as rate
                                              from s where samples > 0 and impressions > 0 group by 1, 2) t) as times,
                  (select json_agg(d) from (select (published_at at time zone $5)::date as day, count(*) as posts
                                              from s where published_at >= $2 and published_at < $3 group by 1) d) as per_day,
                  (select json_agg(b) from (select post_id, title, published_at, impressions, reactions, comments, reshares
                                              from s where published_at >= $2 and published_at < $3 and samples is not null
                                             order by reactions + comments + reshares desc, impressions desc, post_id limit 5) b) as best,
                  (select json_agg(g) from (select day, impressions, reactions, comments, reshares from post_metric_days
                                             where project_id = $1 and day >= $6::date and day <= $7::date) g) as series`,
      values: [project.id, start, end, prevStart, 'Europe/Paris', from, today, workspace.id],
    },
  },
  {
    surface: 'analytics posts',
    path: `/v1/analytics/posts?projectId=${project.id}`,
    // The first page (50) of the project's published posts with their latest metrics, newest first.
    minimal: {
      text: `select p.id, p.title, p.published_at, p.network_post_urn, s.impressions, s.reactions, s.comments, s.reshares, s.samples, s.sync_state, s.last_synced_at, s.last_error
               from post_metric_state s join posts p on p.id = s.post_id
              where s.project_id = $1 order by s.published_at desc, s.post_id desc limit 51`,
      values: [project.id],
    },
  },
  {
    surface: 'analytics cross-workspace',
    path: `/v1/analytics/cross-workspace/overview?from=${from}&to=${today}`,
    // The key's one workspace: its name and project count beside the period's totals (its
    // published posts in the period with their latest metrics, if synced).
    minimal: {
      text: `select w.name, (select count(*) from projects where workspace_id = w.id) as projects, t.*
               from workspaces w,
                    lateral (select count(*) as posts, sum(s.impressions) as impressions, sum(s.reactions) as reactions, sum(s.comments) as comments, sum(s.reshares) as reshares
                               from posts p left join post_metric_state s on s.post_id = p.id
                              where p.workspace_id = w.id and p.status = 'published' and p.published_at >= $2 and p.published_at < $3) t
              where w.id = $1`,
      values: [workspace.id, utc.start, utc.end],
    },
  },
  {
    surface: 'calendar',
    path: `/v1/calendar?projectId=${project.id}&from=${weekAgo}&to=${today}`,
    // The week's posts at their calendar instant (published ones at their publish time, from the published-posts index; scheduled and
    // failed ones at their scheduled time) and the drafts holding a calendar slot in it.
    minimal: {
      text: `select id, project_id, status, title, content_type, published_at as at from posts
              where workspace_id = $1 and project_id = $2 and deleted_at is null and status = 'published' and published_at >= $3 and published_at < $4
             union all
             select id, project_id, status, title, content_type, scheduled_at from posts
              where workspace_id = $1 and project_id = $2 and deleted_at is null and status in ('scheduled', 'failed_to_publish') and scheduled_at >= $3 and scheduled_at < $4
             union all
             select p.id, s.project_id, p.status, p.title, s.content_type, s.date from calendar_slots s join posts p on p.id = s.post_id
              where s.workspace_id = $1 and s.project_id = $2 and s.date >= $3 and s.date < $4 and p.deleted_at is null
                and p.status not in ('scheduled', 'published', 'failed_to_publish')`,
      values: [workspace.id, project.id, week.start, week.end],
    },
  },
].map((sf) => ({ ...sf, headers }));
const sizes = SIZES.map((size, i) => ({ corpus: () => `${size} posts`, grow: i ? () => insertPosts(SIZES[i - 1]! + 1, size) : undefined }));
const { explain, connections, profile } = opt;
const [durationMs, warmupMs] = [opt.duration * 1000, opt.warmup * 1000];
const figures = await measureReads({ sizes, surfaces, explain, connections, profile, durationMs, warmupMs });
console.log(`\nanalytics reads, ${opt.connections} connections, ${opt.duration} s each:`);
for (const f of figures)
  console.log(
    `  ${f.surface} [${f.corpus}]: API ${f.api.rps.toFixed(1)}/s p99 ${f.api.latencyMs.p99.toFixed(1)} ms · same statements ${f.same.rps.toFixed(1)}/s p99 ${f.same.latencyMs.p99.toFixed(1)} ms · ` +
      `minimal ${f.minimal.rps.toFixed(1)}/s p99 ${f.minimal.latencyMs.p99.toFixed(1)} ms · API / same statements bare: ${f.apiOverSame.toFixed(2)}× · same statements / minimal: ${f.sameOverMinimal.toFixed(2)}×`,
  );
if (!opt['no-sync']) {
  // Sync passes over --sync-posts posts on the simulator (growth on) until none is due.
  const { startNetworkSimulator } = await import('../sim/network/server');
  const { createNetworkClient } = await import('../lib/network/client');
  const { connectedPersonalProject } = await import('../admin/simulatedAccounts');
  const { syncDueMetrics } = await import('../lib/analytics/sync');
  const sim = await startNetworkSimulator({ port: SIM_PORT });
  const person = { personId: 'benchperson', name: 'Bench Person', expiresInSeconds: 30 * 86_400, projectName: 'Sync person' };
  const connected = await connectedPersonalProject(sim.control, workspace.id, person);
  await sim.control.setMetricsGrowth({ enabled: true, timeScale: 60 });
  const seeded = await sim.control.seedPosts({ author: 'urn:li:person:benchperson', count: opt['sync-posts'], text: 'bench' });
  await db().raw(
    `insert into posts (id, workspace_id, project_id, status, title, content, content_type, network_post_urn, published_at)
     select 'post_sync' || lpad(i::text, 16, '0'), ?, ?, 'published', '', 'x', 'PERSONAL', 'urn:li:share:' || (?::bigint + i), now() - ((i % 48) || ' hours')::interval
       from generate_series(0, ? - 1) i`,
    [workspace.id, connected.project.id, BigInt(seeded.firstPostUrn.split(':').pop()!).toString(), opt['sync-posts']],
  );
  const network = createNetworkClient();
  const t0 = performance.now();
  let [synced, passes] = [0, 0];
  let r;
  do {
    // The pass the metrics-sync workflow's activity runs, with the service's batch and concurrency.
    r = await syncDueMetrics({ db: db(), network });
    passes++;
    synced += r.synced;
    if (r.failed || r.blocked) throw new Error(`sync pass failed: ${JSON.stringify(r)}`);
  } while (r.claimed);
  await sim.close();
  const s = (performance.now() - t0) / 1000;
  const { syncBatch, syncConcurrency } = (await import('../lib/config')).config.analytics;
  console.log(
    `\nmetrics sync: ${synced} posts in ${s.toFixed(1)} s = ${(synced / s).toFixed(0)} posts/s (${passes} passes of ${syncBatch}, ${syncConcurrency} calls in flight)`,
  );
}
await closeStores();
