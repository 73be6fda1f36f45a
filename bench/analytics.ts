// Bench: post analytics (docs/analytics.md).
//
//  1. GET /v1/analytics/overview of a project with 5,000 published posts and 90 days of daily
//     metrics samples (the real API in its own process), beside the bare SQL aggregate: the
//     period totals over the posts and their latest metrics plus the daily-gains rollup, the
//     two reads the overview's figures come from, straight through pg with the same
//     concurrency, in the same run.
//  2. The metrics sync of 10,000 published posts through the real network client against the
//     simulator (in this process): posts/s of the sync pass code the workflow's activity runs.
//
//   npm run bench -- analytics [--posts 5000] [--days 90] [--duration 15] [--connections 8] [--sync-posts 10000]

import { parseArgs } from 'node:util';
import pg from 'pg';
import { closedLoop, summarize } from './lib/load';
import { flushRedis, recreateDatabase } from './lib/database';
import { startServer } from './lib/servers';

const { values: opt } = parseArgs({
  options: {
    posts: { type: 'string', default: '5000' },
    days: { type: 'string', default: '90' },
    duration: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
    'sync-posts': { type: 'string', default: '10000' },
  },
  strict: true,
});
const N = Number(opt.posts);
const DAYS = Number(opt.days);
const DURATION_MS = Number(opt.duration) * 1000;
const CONNECTIONS = Number(opt.connections);
const SYNC_POSTS = Number(opt['sync-posts']);

const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_analytics';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';
Object.assign(process.env, { DATABASE_URL, REDIS_URL, RATE_LIMIT_READ: '10000000', LOG_LEVEL: 'error', NODE_ENV: 'production' });

async function main() {
  await recreateDatabase(DATABASE_URL);
  await flushRedis(REDIS_URL);
  const { createProject, createWorkspace, issueApiKey } = await import('../ops/provision');
  const { db, closeDb } = await import('../lib/db');
  const { closeRedis } = await import('../lib/redis');

  // ---- data: N posts published over DAYS days, one sample per post per day since publishing ----
  const ws = await createWorkspace({ name: 'Analytics bench', plan: 'BUSINESS' });
  const project = await createProject({ workspaceId: ws.id, type: 'PERSONAL_BRAND', name: 'Bench person', timezone: 'Europe/Paris' });
  const key = (await issueApiKey({ workspaceId: ws.id, scopes: ['analytics:read'] })).key;
  const t0 = Date.now();
  await db().raw(
    `insert into posts (id, workspace_id, project_id, status, title, content, content_type, network_post_urn, published_at, created_at)
     select 'post_bench' || lpad(i::text, 16, '0'), ?, ?, 'published', 'Bench post ' || i, 'x', 'PERSONAL', 'urn:li:share:' || (1000000 + i),
            now() - (((i * 7919) % (? * 24)) || ' hours')::interval, now() - interval '100 days'
       from generate_series(1, ?) i`,
    [ws.id, project.id, DAYS, N],
  );
  await db().raw(
    `insert into post_metric_samples (post_id, workspace_id, project_id, sampled_at, impressions, reactions, comments, reshares)
     select p.id, p.workspace_id, p.project_id, p.published_at + (d || ' days')::interval + interval '1 hour',
            (200 + (hashtext(p.id) & 4095)) * (d + 1), (5 + (hashtext(p.id) & 63)) * (d + 1), (hashtext(p.id) & 7) * (d + 1), (hashtext(p.id) & 3) * (d + 1)
       from posts p cross join generate_series(0, ? - 1) d
      where p.project_id = ? and p.published_at + (d || ' days')::interval + interval '1 hour' < now()`,
    [DAYS, project.id],
  );
  await db().raw(
    `insert into post_metric_state (post_id, workspace_id, project_id, network_post_urn, published_at, impressions, reactions, comments, reshares, samples, sync_state, last_synced_at)
     select p.id, p.workspace_id, p.project_id, p.network_post_urn, p.published_at, coalesce(l.impressions, 0), coalesce(l.reactions, 0), coalesce(l.comments, 0), coalesce(l.reshares, 0), l.n, 'ok', l.at
       from posts p join lateral (select max(impressions) impressions, max(reactions) reactions, max(comments) comments, max(reshares) reshares, count(*) n, max(sampled_at) at
                                    from post_metric_samples s where s.post_id = p.id) l on true
      where p.project_id = ?`,
    [project.id],
  );
  const { rebuildDailyGains } = await import('../lib/analytics/sync');
  await rebuildDailyGains(db(), project.id);
  await db().raw('analyze');
  const [{ n: samples }] = (await db().raw('select count(*)::int as n from post_metric_samples')).rows;
  console.log(`seeded ${N} posts, ${samples} samples over ${DAYS} days in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  // ---- 1. overview over HTTP vs the bare SQL aggregate ----
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris' }).format(new Date());
  const from = new Date(Date.now() - (DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
  const server = await startServer('app', 'bench/lib/serve-app.ts', { ...process.env });
  const target = {
    url: `${server.baseUrl}/v1/analytics/overview?projectId=${project.id}&from=${from}&to=${today}`,
    headers: { authorization: `Bearer ${key}` },
  };
  const probe = await fetch(target.url, { headers: target.headers });
  const body = (await probe.json()) as { data: { totals: { posts: number; impressions: number } } };
  if (probe.status !== 200) throw new Error(`overview answered ${probe.status}: ${JSON.stringify(body)}`);
  console.log(`overview: ${body.data.totals.posts} posts, ${body.data.totals.impressions} impressions in the period`);
  await closedLoop(target, { connections: CONNECTIONS, durationMs: Number(opt.warmup) * 1000 });
  const api = await closedLoop(target, { connections: CONNECTIONS, durationMs: DURATION_MS });
  await server.stop();

  const { periodBounds } = await import('../lib/analytics/overview');
  const { start, end } = periodBounds(from, today, 'Europe/Paris');
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: CONNECTIONS });
  const bare = async () => {
    await Promise.all([
      pool.query(
        `select count(*), sum(s.impressions), sum(s.reactions), sum(s.comments), sum(s.reshares)
                    from posts p left join post_metric_state s on s.post_id = p.id
                   where p.workspace_id = $1 and p.project_id = $2 and p.status = 'published' and p.published_at >= $3 and p.published_at < $4`,
        [ws.id, project.id, start, end],
      ),
      pool.query(
        `select day, impressions, reactions, comments, reshares from post_metric_days where project_id = $1 and day >= $2::date and day <= $3::date`,
        [project.id, from, today],
      ),
    ]);
  };
  const runBare = async (ms: number) => {
    const lat: number[] = [];
    const deadline = performance.now() + ms;
    const startedAt = performance.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < deadline) {
          const a = performance.now();
          await bare();
          lat.push(performance.now() - a);
        }
      }),
    );
    return { rps: lat.length / ((performance.now() - startedAt) / 1000), latency: summarize(lat) };
  };
  await runBare(Number(opt.warmup) * 1000);
  const sql = await runBare(DURATION_MS);
  await pool.end();

  console.log(`\noverview, ${CONNECTIONS} connections, ${opt.duration} s:`);
  console.log(
    `  API  GET /v1/analytics/overview  ${api.rps.toFixed(1)} req/s  p50 ${api.latencyMs.p50.toFixed(1)} ms  p99 ${api.latencyMs.p99.toFixed(1)} ms  errors ${api.errors}`,
  );
  console.log(
    `  bare SQL aggregate (same queries) ${sql.rps.toFixed(1)} q/s    p50 ${sql.latency.p50.toFixed(1)} ms  p99 ${sql.latency.p99.toFixed(1)} ms`,
  );
  console.log(`  API / bare: ${((api.rps / sql.rps) * 100).toFixed(1)}%`);

  // ---- 2. metrics sync of SYNC_POSTS posts through the simulator ----
  const { startNetworkSimulator } = await import('../sim/network/server');
  const sim = await startNetworkSimulator({ port: 0 });
  const { HttpNetworkClient } = await import('../lib/network/client');
  const { config } = await import('../lib/config');
  const { storeConnectionTokens } = await import('../ops/connections');
  const { syncDueMetrics } = await import('../lib/analytics/sync');
  const token = await sim.control.issueToken({ personId: 'benchperson', name: 'Bench Person', expiresInSeconds: 30 * 86_400 });
  const syncProject = await createProject({ workspaceId: ws.id, type: 'PERSONAL_BRAND', name: 'Sync person', connection: 'none' });
  await storeConnectionTokens({
    workspaceId: ws.id,
    projectId: syncProject.id,
    accessToken: token.accessToken,
    refreshToken: token.refreshToken,
    expiresAt: new Date(token.expiresAt),
    personId: 'benchperson',
    name: 'Bench Person',
  });
  await sim.control.setMetricsGrowth({ enabled: true, timeScale: 60 });
  const seeded = await sim.control.seedPosts({ author: 'urn:li:person:benchperson', count: SYNC_POSTS, text: 'bench' });
  const firstUrn = BigInt(seeded.firstPostUrn.split(':').pop()!);
  await db().raw(
    `insert into posts (id, workspace_id, project_id, status, title, content, content_type, network_post_urn, published_at)
     select 'post_sync' || lpad(i::text, 16, '0'), ?, ?, 'published', '', 'x', 'PERSONAL', 'urn:li:share:' || (?::bigint + i), now() - ((i % 48) || ' hours')::interval
       from generate_series(0, ? - 1) i`,
    [ws.id, syncProject.id, firstUrn.toString(), SYNC_POSTS],
  );
  const network = new HttpNetworkClient({
    baseUrl: sim.url,
    apiVersion: config.network.apiVersion,
    clientId: config.network.clientId,
    clientSecret: config.network.clientSecret,
    timeoutMs: 15_000,
  });
  const syncStart = performance.now();
  let synced = 0;
  let passes = 0;
  for (;;) {
    const r = await syncDueMetrics(
      { db: db(), network },
      { batch: config.analytics.syncBatch, concurrency: config.analytics.syncConcurrency },
    );
    passes++;
    synced += r.synced;
    if (r.claimed === 0) break;
    if (r.failed || r.blocked) throw new Error(`sync pass failed: ${JSON.stringify(r)}`);
  }
  const syncS = (performance.now() - syncStart) / 1000;
  console.log(
    `\nmetrics sync: ${synced} posts in ${syncS.toFixed(1)} s = ${(synced / syncS).toFixed(0)} posts/s (${passes} passes of ${config.analytics.syncBatch}, ${config.analytics.syncConcurrency} calls in flight)`,
  );
  await sim.close();
  await Promise.allSettled([closeDb(), closeRedis()]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
