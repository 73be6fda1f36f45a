// Bench: every read surface at a million posts against the same at ten thousand, then each
// against its statements behind bare Koa (bench/README.md, "reads").

import pg from 'pg';
import { recreateDatabase, withMaintenanceDb } from '../tooling/databases';
import { flushRedis, setBenchEnvironment } from './harness/database';
import { writeResults } from './harness/format';
import { closedLoop, type RunResult } from './harness/load';
import { benchFlags } from './harness/options';
import { serverLoop, startServer, withServerCpu, type ServerHandle } from './harness/servers';
import { captureSurface } from './harness/statements';
import type { ReadSurface } from './reads/surfaces';

const opt = benchFlags(
  `reads: every read surface at --posts against --small-posts, p50/p99 in one run, and each
against its statements behind bare Koa.`,
  {
    posts: { default: 1000000, min: 200, integer: true, help: 'the large seed' },
    'small-posts': { default: 10000, min: 200, integer: true, help: 'the small seed' },
    duration: { default: 3, min: 0.5, arg: 'S', help: 'seconds per measurement (default 3), after --warmup S (default 1)' },
    warmup: { default: 1, arg: 'S', help: 'seconds of warm-up before each measurement' },
    connections: { default: 4, min: 1, integer: true, help: 'closed-loop connections' },
    keep: { type: 'boolean', help: 'reuse a database already seeded at that size by this bench (migrated to the latest)' },
    only: { type: 'string', arg: 'REGEX', help: 'the surfaces whose name matches' },
    explain: { type: 'boolean', help: "EXPLAIN (ANALYZE, BUFFERS) of each surface's statements at the large size, largest workspace" },
    backfill: { type: 'boolean', help: "instead: the hourly rollup's backfill on the large seed, under a lock and online, beside writers" },
    profile: { type: 'boolean', help: "the API's CPU profile per call, over an extra run of each surface (reads-*.cpuprofile)" },
  },
);
const [LARGE, SMALL] = [opt.posts, opt['small-posts']];
const LOOP = { connections: opt.connections, durationMs: opt.duration * 1000 };
const DATABASE_BASE = process.env.BENCH_READS_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_reads';
const REDIS_URL = process.env.BENCH_READS_REDIS_URL ?? 'redis://127.0.0.1:6379/8';
// Each API process gets its own DATABASE_URL (main).
const LIMIT = '100000000';
setBenchEnvironment(`${DATABASE_BASE}_${SMALL}`, REDIS_URL, { RATE_LIMIT_READ: LIMIT, RATE_LIMIT_WRITE: LIMIT, LOG_LEVEL: 'error' });

const label = (n: number) =>
  n >= 1_000_000 && n % 1_000_000 === 0 ? `${n / 1_000_000}M` : n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
const ms = (n: number) => `${n.toFixed(1)} ms`;
/** A run's figures; `errors` counts every answer but a 200, `statuses` says which. */
const pick = (r: RunResult) => ({ rps: r.rps, latencyMs: r.latencyMs, statuses: r.statuses, errors: r.errors });

/** The database seeded with `posts` posts (./reads/seed.ts), or with --keep the one an earlier run seeded, migrated. */
async function seeded(posts: number) {
  const url = `${DATABASE_BASE}_${posts}`;
  const { createKnex, migrateLatest } = await import('../lib/db');
  const { seedReads, seededWorkspaces } = await import('./reads/seed');
  // The mark a seeded database carries (its comment), so --keep reuses only what this seed wrote.
  const mark = `bench reads seed v2: ${posts} posts`;
  const markSql = "select shobj_description(oid, 'pg_database') as mark from pg_database where datname = $1";
  const name = new URL(url).pathname.slice(1);
  const kept = opt.keep && (await withMaintenanceDb(url, async (admin, db) => (await admin.query(markSql, [db])).rows[0]?.mark)) === mark;
  if (!kept) {
    console.log(`• ${name}: seeding ${posts} posts`);
    await recreateDatabase(url);
  }
  const k = createKnex(url);
  try {
    if (!kept) {
      const s = await seedReads(k, { posts }, (line) => console.log(line));
      await k.raw(`comment on database "${name}" is '${mark}'`);
      return { url, ...s };
    }
    const ran = await migrateLatest(k);
    if (ran.length) await k.raw('analyze');
    console.log(`• ${name}: kept (${posts} posts${ran.length ? `; migrated ${ran.join(', ')}` : ''})`);
    return { url, ...(await seededWorkspaces(k, posts)) };
  } finally {
    await k.destroy();
  }
}

const measure = (server: ServerHandle, path: string, headers: Record<string, string>) =>
  serverLoop(server, { url: `${server.baseUrl}${path}`, headers }, { ...LOOP, warmupMs: opt.warmup * 1000 });

await flushRedis(REDIS_URL);
const small = await seeded(SMALL);
const large = await seeded(LARGE);
if (opt.backfill) {
  console.log(`\nthe rollup's backfill on ${label(LARGE)} posts:`);
  const { measureBackfill } = await import('./reads/backfill');
  writeResults('reads-backfill', { at: new Date().toISOString(), posts: LARGE, ...(await measureBackfill(large.url, label(LARGE))) });
  process.exit(0);
}
const { readSurfaces } = await import('./reads/surfaces');
const now = Date.now();
const surfaces = (w: (typeof large)['largest']): ReadSurface[] =>
  readSurfaces(w, now).filter((sf) => !opt.only || new RegExp(opt.only, 'i').test(sf.surface));
// Pools of 8 (the API's default is 10): three servers share a Postgres other work uses too.
const env = { ...process.env, DB_POOL_MAX: '8' };
const apiSmall = await startServer('api-small', 'bench/harness/serve-app.ts', { ...env, DATABASE_URL: small.url });
const apiLarge = await startServer('api-large', 'bench/harness/serve-app.ts', { ...env, DATABASE_URL: large.url });
const replay = await startServer('replay', 'bench/harness/serve-replay.ts', { ...env, DATABASE_URL: large.url });
const pool = new pg.Pool({ connectionString: large.url, max: 2 });
const figures = [];
const floors = [];
try {
  console.log(
    `\nlargest workspace: ${small.largest.posts} posts at ${label(SMALL)}, ${large.largest.posts} at ${label(LARGE)}; ` +
      `small workspace: ${small.small.posts} and ${large.small.posts}; ${opt.connections} connections, ${opt.duration} s each`,
  );
  for (const workspace of ['largest', 'small'] as const) {
    const atSmall = surfaces(small[workspace]);
    for (const [i, sf] of surfaces(large[workspace]).entries()) {
      const a = (await measure(apiSmall, atSmall[i]!.path, atSmall[i]!.headers)).run;
      const b = (await measure(apiLarge, sf.path, sf.headers)).run;
      const posts = { small: small[workspace].posts, large: large[workspace].posts };
      const f = { surface: sf.surface, workspace, posts, small: pick(a), large: pick(b), p99Ratio: b.latencyMs.p99 / a.latencyMs.p99 };
      figures.push(f);
      const errs = a.errors + b.errors ? ` ERRORS ${JSON.stringify(a.statuses)} / ${JSON.stringify(b.statuses)}` : '';
      console.log(
        `  ${sf.surface} (${workspace}): ${label(SMALL)} p50 ${ms(a.latencyMs.p50)} p99 ${ms(a.latencyMs.p99)} ${a.rps.toFixed(0)}/s · ` +
          `${label(LARGE)} p50 ${ms(b.latencyMs.p50)} p99 ${ms(b.latencyMs.p99)} ${b.rps.toFixed(0)}/s${errs}`,
      );
      console.log(
        `reads at ${label(LARGE)} ${sf.surface} (${workspace} workspace): p99 ${label(LARGE)} / ${label(SMALL)}: ${f.p99Ratio.toFixed(2)}×`,
      );
    }
  }
  console.log(`\nthe API against its statements behind bare Koa, ${label(LARGE)}, largest workspace:`);
  for (const sf of surfaces(large.largest)) {
    const statements = await captureSurface(apiLarge, sf.surface, { path: sf.path, headers: sf.headers }, '  ');
    if (opt.explain) await (await import('./reads/plans')).explainAsSent(pool, statements);
    await replay.call('load', { key: sf.surface, captured: [statements] });
    const bare = `/replay?${new URLSearchParams({ key: sf.surface })}`;
    // API, bare, bare, API: neither goes first every time.
    const [api1, bare1, bare2, api2] = [
      await measure(apiLarge, sf.path, sf.headers),
      await measure(replay, bare, {}),
      await measure(replay, bare, {}),
      await measure(apiLarge, sf.path, sf.headers),
    ];
    const mean = (x: RunResult, y: RunResult) => ({ ...pick(x), rps: (x.rps + y.rps) / 2 });
    const fl = {
      surface: sf.surface,
      statements: statements.length,
      api: mean(api1.run, api2.run),
      bare: mean(bare1.run, bare2.run),
      apiCpuUs: (api1.cpuUs + api2.cpuUs) / 2,
      bareCpuUs: (bare1.cpuUs + bare2.cpuUs) / 2,
      ratio: (api1.run.rps + api2.run.rps) / (bare1.run.rps + bare2.run.rps),
    };
    floors.push(fl);
    console.log(
      `    API ${fl.api.rps.toFixed(0)}/s (server CPU ${fl.apiCpuUs.toFixed(0)} µs/call) · behind bare Koa ${fl.bare.rps.toFixed(0)}/s (${fl.bareCpuUs.toFixed(0)} µs/call)`,
    );
    console.log(`${sf.surface}: API / same statements behind bare Koa: ${fl.ratio.toFixed(2)}×`);
    if (opt.profile) {
      const loop = () => closedLoop({ url: `${apiLarge.baseUrl}${sf.path}`, headers: sf.headers }, LOOP);
      const file = `reads-${sf.surface.replace(/[^A-Za-z0-9]+/g, '-')}`;
      await withServerCpu(apiLarge, loop, (r) => r.requests, { file, title: `API process over ${sf.surface} (per call)` });
    }
  }
} finally {
  await Promise.allSettled([apiSmall.stop(), apiLarge.stop(), replay.stop(), pool.end()]);
}
console.log(`\nsummary (target: p99 ${label(LARGE)} / ${label(SMALL)} ≤ 1.5×; API / behind bare Koa ≥ 0.8×):`);
for (const f of figures) {
  console.log(
    `  ${`${f.surface} (${f.workspace})`.padEnd(42)} p99 ${ms(f.small.latencyMs.p99).padStart(9)} → ${ms(f.large.latencyMs.p99).padStart(9)}  ${f.p99Ratio.toFixed(2)}×${f.p99Ratio > 1.5 ? '  MISS' : ''}`,
  );
}
for (const f of floors)
  console.log(`  ${f.surface.padEnd(42)} API / behind bare Koa ${f.ratio.toFixed(2)}×${f.ratio < 0.8 ? '  MISS' : ''}`);
writeResults('reads', { at: new Date().toISOString(), large: LARGE, small: SMALL, figures, floors });
process.exit(0);
