// Bench: GET /v1/posts?projectId=…&limit=50, the real API against a bare Koa + pg server answering
// the same page in the same run (bench/README.md, "posts-list").

import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { resetStores, setBenchEnvironment } from './harness/database';
import { f0, f1, RESULTS_DIR, step } from './harness/format';
import { closedLoop, getJson, openLoop, type RunResult, type Target } from './harness/load';
import { benchFlags } from './harness/options';
import { diff, machineInfo, postgresCpuGroup, snapshot, waitForQuiet, type Groups } from './harness/proc';
import { summarizeHeapProfile, summarizeProfile, type AllocationSummary, type ProfileSummary } from './harness/profile';
import { REPO_ROOT, startServer, type ServerHandle } from './harness/servers';
import type { StageTiming } from './harness/stages';
import { report } from './posts-list/report';

export const TARGETS = { minRatio: 0.8, maxP99MsAtRate: 25 };
// The limiter runs its Redis script on every request but never answers 429.
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
const WARMUP_MS = opt.warmup * 1000;
export const ROUNDS = opt.profile ? 1 : opt.rounds;
export const RATE_DURATION_MS = opt['rate-duration'] * 1000;
const QUIET_THRESHOLD = 0.1;
// Split on spaces: Node flags never contain any.
const SERVER_NODE_ARGS = opt['server-node-options'].split(' ').filter(Boolean);
const RETRIES = opt.profile ? 0 : opt.retries;
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';
const BENCH_DB = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
setBenchEnvironment(DATABASE_URL, REDIS_URL, { RATE_LIMIT_READ });
const CPUS = machineInfo().cpus;

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

export type Measured<R extends RunResult = RunResult> = Awaited<ReturnType<typeof measure<R>>>;
type Probes = { groups: () => Promise<Groups>; pgTransactions: () => Promise<number> };

/** A run with the server's CPU and GC, every process's CPU and the bench database's statements, per request. */
async function measure<R extends RunResult>(server: ServerHandle, probes: Probes, run: () => Promise<R>) {
  const [x0, u0, s0] = [await probes.pgTransactions(), await server.usage(), snapshot()];
  const result = await run();
  const [s1, u1] = [snapshot(), await server.usage()];
  const cpu = diff(s0, s1, await probes.groups());
  // An idle Postgres 15+ backend reports its counters only after up to 10 s (PGSTAT_IDLE_INTERVAL).
  await sleep(10_500);
  const x1 = await probes.pgTransactions();
  const n = Math.max(1, result.ok);
  const perReq = (ms: number) => Math.round((ms * 1000) / n);
  const cpuUsPerReq =
    cpu && result.ok
      ? Object.fromEntries(Object.entries({ ...cpu.cpuMs, unaccounted: cpu.unaccountedMs }).map(([k, ms]) => [k, perReq(ms)]))
      : null;
  const d = (k: keyof typeof u0.gc) => u1.gc[k] - u0.gc[k];
  const gc = {
    pauseUsPerReq: perReq(d('minorMs') + d('majorMs') + d('otherMs')),
    minorUsPerReq: perReq(d('minorMs')),
    majorUsPerReq: perReq(d('majorMs')),
    minorCount: d('minorCount'),
    majorCount: d('majorCount'),
    heapUsedMiB: Math.round((u1.heapUsedBytes / 1024 ** 2) * 10) / 10,
  };
  /** pgStatementsPerReq: transactions (here statements, all autocommit) in the bench database per request. */
  return {
    result,
    serverCpuUsPerReq: Math.round((u1.cpuUs - u0.cpuUs) / n),
    gc,
    cpu,
    cpuUsPerReq,
    pgStatementsPerReq: Math.round(((x1 - x0) / n) * 100) / 100,
  };
}

/** Share of the machine's cores used by processes outside the bench during a measurement. */
export const otherShare = (m: Measured) => (m.cpu ? (m.cpu.cpuMs.other! + m.cpu.unaccountedMs) / (m.result.durationS * 1000 * CPUS) : 0);
export const noise = (m: Measured) =>
  otherShare(m) >= 0.05 ? ` — NOTE: other work took ${(otherShare(m) * 100).toFixed(0)}% of the machine` : '';

/** One run per database at a time: an advisory lock held by a session on the maintenance database. */
async function holdRunLock(): Promise<() => Promise<void>> {
  const admin = new URL(DATABASE_URL);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  client.on('error', () => undefined);
  await client.connect();
  for (let announced = false; ; announced = true) {
    const { rows } = await client.query('select pg_try_advisory_lock(hashtext($1)) as ok', [`content-scheduler bench ${BENCH_DB}`]);
    if (rows[0]?.ok) break;
    if (!announced) step(`another run is using ${BENCH_DB}; waiting for it to finish`);
    await sleep(5000);
  }
  return () => client.end().catch(() => undefined);
}

/** The benchmarked workspace (admin/provision) and its --posts posts, written in bulk, 2 % more soft-deleted. */
async function seed() {
  const { postContent, prng, titleOf } = await import('./harness/content');
  const { benchWorkspace } = await import('./harness/seed');
  const { db, closeDb } = await import('../lib/db');
  const { closeRedis } = await import('../lib/redis');
  const { newId } = await import('../lib/ids');
  const { workspace, project, key } = await benchWorkspace({
    name: 'Bench Co',
    project: { name: 'Bench Person', username: 'bench-person', connection: 'connected' },
    scopes: ['read'],
    keyName: 'bench',
  });
  const statuses: Array<{ id: string; category: string }> = await db()('post_statuses')
    .where({ workspace_id: workspace.id })
    .select('id', 'category');
  const MIX: Array<[string, string, number]> = [
    ['draft', 'draft', 0.4],
    ['published', 'published', 0.25],
    ['scheduled', 'scheduled', 0.15],
    ['suggested', 'suggested', 0.1],
    ['waitingApproval', 'review', 0.06],
    ['failed_to_publish', 'scheduled', 0.04],
  ];
  const CONTENT_TYPES = ['PERSONAL', 'PERSONAL', 'PERSONAL', 'BUSINESS_EXTERNAL', 'EDUCATIONAL'];
  const rand = prng(20261121);
  const [now, day] = [Date.now(), 86_400_000];
  const deleted = Math.round(opt.posts * 0.02);
  const rows: Record<string, unknown>[] = [];
  const lengths: number[] = [];
  for (let i = 0; i < opt.posts + deleted; i++) {
    let u = rand(),
      acc = 0;
    const [status, category] = (MIX.find(([, , p]) => (acc += p) >= u) ?? MIX[0]!).slice(0, 2) as [string, string];
    const createdAt = new Date(now - Math.floor(rand() * 2 * 365 * day));
    const content = postContent(rand);
    lengths.push(content.length);
    u = rand();
    const published = status === 'published' ? new Date(createdAt.getTime() + day) : null;
    rows.push({
      id: newId('post'),
      workspace_id: workspace.id,
      project_id: project.id,
      status,
      status_id: statuses.find((s) => s.category === category)?.id ?? null,
      title: u < 0.7 ? titleOf(content) : '',
      title_auto: u < 0.7,
      content,
      content_type: CONTENT_TYPES[Math.floor(rand() * CONTENT_TYPES.length)],
      scheduled_at: status === 'scheduled' || status === 'failed_to_publish' ? new Date(now + Math.floor(rand() * 60 * day)) : published,
      published_at: published,
      created_at: createdAt,
      updated_at: rand() < 0.6 ? new Date(createdAt.getTime() + Math.floor(rand() * 7 * day)) : null,
      deleted_at: i >= opt.posts ? new Date(now - Math.floor(rand() * 30 * day)) : null,
    });
  }
  for (let i = 0; i < rows.length; i += 1000) await db()('posts').insert(rows.slice(i, i + 1000));
  await db().raw('vacuum analyze posts');
  await Promise.all([closeDb(), closeRedis()]);
  const contentChars = {
    min: Math.min(...lengths),
    max: Math.max(...lengths),
    mean: Math.round(lengths.reduce((a, b) => a + b, 0) / lengths.length),
  };
  return { workspaceId: workspace.id, projectId: project.id, apiKey: key, posts: opt.posts, deletedPosts: deleted, contentChars };
}

/** The page a server answered, refused unless it is a full first page of 50 with a next cursor. */
function checkResponse(name: string, r: Awaited<ReturnType<typeof getJson>>) {
  const body = r.body as { data?: unknown[]; pagination?: { next_cursor: string | null; has_more: boolean } };
  if (r.status !== 200 || body?.data?.length !== 50 || !body.pagination?.has_more || !body.pagination.next_cursor)
    throw new Error(`${name} did not answer a full first page (${r.status}): ${JSON.stringify(r.body).slice(0, 500)}`);
  return body.data;
}

export type Bench = Awaited<ReturnType<typeof setUp>>;
export type Run = Awaited<ReturnType<typeof run>>;

/** The stores and data, both servers answering the same page, and the measurement with its probes. */
async function setUp() {
  const started = Date.now();
  const machine = machineInfo();
  console.log(`posts-list bench — ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  const releaseLock = await holdRunLock();
  step(`database ${DATABASE_URL.replace(/\/\/([^:@/]*):[^@]*@/, '//$1:***@')} (reset), Redis ${REDIS_URL} (flushed)`);
  await resetStores(DATABASE_URL, REDIS_URL);
  step(`seeding: workspace + project + API key via admin/provision, ${opt.posts.toLocaleString('en-US')} posts`);
  const s = await seed();
  step(
    `seeded ${s.posts.toLocaleString('en-US')} live + ${s.deletedPosts} soft-deleted posts, content ${s.contentChars.min}-${s.contentChars.max} chars (mean ${s.contentChars.mean})`,
  );
  const env = { ...process.env, BENCH_WORKSPACE_ID: s.workspaceId };
  const [ours, bare] = await Promise.all([
    startServer('ours', 'bench/harness/serve-app.ts', env, SERVER_NODE_ARGS),
    startServer('bare', 'bench/harness/serve-bare.ts', env, SERVER_NODE_ARGS),
  ]);
  const pgAdmin = new pg.Client({ connectionString: DATABASE_URL });
  await pgAdmin.connect();
  const stopAll = () => Promise.allSettled([ours.stop(), bare.stop(), pgAdmin.end()]);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  const requestPath = `/v1/posts?projectId=${encodeURIComponent(s.projectId)}&limit=50`;
  // The same request, credential included, goes to both: the bare server ignores it.
  const target = (srv: ServerHandle): Target => ({
    url: srv.baseUrl + requestPath,
    headers: { authorization: `Bearer ${s.apiKey}`, accept: 'application/json' },
  });
  step(
    `servers: ours pid ${ours.pid} :${ours.port}, bare pid ${bare.pid} :${bare.port} — GET ${requestPath.replace(s.projectId, '<project>')}`,
  );
  if (SERVER_NODE_ARGS.length) step(`server Node flags: ${SERVER_NODE_ARGS.join(' ')}`);
  const [ro, rb] = await Promise.all([getJson(target(ours)), getJson(target(bare))]);
  if (JSON.stringify(checkResponse('ours', ro)) !== JSON.stringify(checkResponse('bare', rb)))
    throw new Error('ours and bare return different data for the same page');
  if (ro.headers['x-ratelimit-limit'] !== RATE_LIMIT_READ)
    throw new Error(`ours reports X-RateLimit-Limit ${ro.headers['x-ratelimit-limit']}, expected ${RATE_LIMIT_READ}`);
  const bytes = { ours: JSON.stringify(ro.body).length, bare: JSON.stringify(rb.body).length };
  step(`both answer the same 50 posts (body ${f0(bytes.ours)} B ours / ${f0(bytes.bare)} B bare; ours' cursor is signed, so longer)`);
  step(
    `rate limiter active with RATE_LIMIT_READ=${Number(RATE_LIMIT_READ).toLocaleString('en-US')}/min: every request runs its Redis script, none is refused`,
  );
  // Who is who among the machine's processes: other databases' backends count as "other".
  const variantProcess = { pid: -1 };
  const groups = async (): Promise<Groups> => ({
    ours: (p) => p.pid === ours.pid,
    bare: (p) => p.pid === bare.pid,
    variant: (p) => p.pid === variantProcess.pid,
    generator: (p) => p.pid === process.pid,
    postgres: await postgresCpuGroup(pgAdmin, BENCH_DB),
    redis: (p) => p.comm.startsWith('redis-server'),
  });
  const quiet = () => waitForQuiet({ waitMs: opt['quiet-wait'] * 1000, quietBelow: QUIET_THRESHOLD, groups, countUnaccounted: true });
  const pgTransactions = async () => {
    const sql = 'select xact_commit + xact_rollback as n from pg_stat_database where datname = $1';
    return Number((await pgAdmin.query<{ n: string }>(sql, [BENCH_DB])).rows[0]?.n ?? 0);
  };
  // A measurement shared with a busy neighbour is repeated (--retries), the cleanest kept.
  const measureClean = async <R extends RunResult>(label: string, srv: ServerHandle, run: () => Promise<R>): Promise<Measured<R>> => {
    let best: Measured<R> | null = null;
    for (let attempt = 0; attempt <= RETRIES; attempt++) {
      await quiet();
      step(attempt === 0 ? label : `${label} — again (${attempt + 1}/${RETRIES + 1})`);
      const m = await measure(srv, { groups, pgTransactions }, run);
      if (!best || otherShare(m) < otherShare(best)) best = m;
      if (otherShare(m) < QUIET_THRESHOLD) break;
      if (attempt < RETRIES)
        console.log(`    discarded: other work took ${(otherShare(m) * 100).toFixed(0)}% of the machine (${f0(m.result.rps)} req/s)`);
    }
    return best!;
  };
  return { started, machine, releaseLock, s, env, ours, bare, stopAll, target, bytes, variantProcess, quiet, measureClean };
}

/** Capacity, ablation, fixed rate, stage timings. */
async function run(b: Bench) {
  const { closed, profiles } = await runCapacity(b);
  const ablation = opt.ablation ? await runAblation(b) : [];
  const fixed = opt.profile ? null : await runFixedRate(b);
  let stages: StageTiming[] | null = null;
  if (opt.profile || opt.stages) {
    await b.quiet();
    step('stage timings inside the app process (unloaded, sequential)');
    stages = await b.ours.call<StageTiming[]>('stages', {
      token: b.s.apiKey,
      projectId: b.s.projectId,
      port: b.ours.port,
      iterations: 1000,
    });
  }
  return { closed, profiles, ablation, fixed, stages };
}

/** One closed-loop measurement of `srv` and its line; a capacity round's with its latency. */
async function closedRun(b: Bench, label: string, srv: ServerHandle, capacity: boolean) {
  const loop = () => closedLoop(b.target(srv), { connections: opt.connections, durationMs: DURATION_MS });
  const tag = capacity && opt.profile ? ' (profiling)' : '';
  const m = await b.measureClean(`${label}: ${DURATION_MS / 1000} s closed loop, ${opt.connections} connections${tag}`, srv, loop);
  const r = m.result;
  const lat = capacity ? `, p50 ${f1(r.latencyMs.p50)} ms, p99 ${f1(r.latencyMs.p99)} ms, ${r.errors} errors` : '';
  console.log(
    `    ${f0(r.rps)} req/s${lat}, server CPU ${f0(m.serverCpuUsPerReq)} µs/req (GC ${f0(m.gc.pauseUsPerReq)}), ${m.pgStatementsPerReq} PG statements/req${noise(m)}`,
  );
  return m;
}

/** (i) Capacity: closed loop, ABBA rounds after a warm-up of each server. */
async function runCapacity(b: Bench) {
  for (const srv of [b.ours, b.bare]) {
    step(`warm-up ${srv.name}: ${WARMUP_MS / 1000} s closed loop, ${opt.connections} connections`);
    await closedLoop(b.target(srv), { connections: opt.connections, durationMs: WARMUP_MS });
  }
  const closed: Record<'ours' | 'bare', Measured[]> = { ours: [], bare: [] };
  const profiles: Record<string, { summary: ProfileSummary; allocations: AllocationSummary; requests: number }> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const srv of round % 2 === 0 ? [b.ours, b.bare] : [b.bare, b.ours]) {
      if (opt.profile) await srv.profileStart(undefined, { survivorsOnly: opt['profile-survivors'] });
      const m = await closedRun(b, `round ${round + 1}/${ROUNDS} ${srv.name}`, srv, true);
      if (opt.profile) {
        const file = await srv.profileStop(path.join(RESULTS_DIR, 'profiles', `posts-list-${srv.name}.cpuprofile`));
        const allocations = summarizeHeapProfile(file.replace(/\.cpuprofile$/, '.heapprofile'), REPO_ROOT);
        profiles[srv.name] = { summary: summarizeProfile(file, REPO_ROOT), allocations, requests: m.result.ok };
      }
      closed[srv.name as 'ours' | 'bare'].push(m);
    }
  }
  return { closed, profiles };
}

/** --ablation: the bare server plus one piece of ours at a time. */
async function runAblation(b: Bench) {
  const ablation: Array<{ variant: string; m: Measured }> = [];
  for (const variant of ['ratelimit', 'project', 'knex', 'handler']) {
    const env = { ...b.env, BENCH_BARE_ADD: variant };
    const srv = await startServer(`bare+${variant}`, 'bench/harness/serve-bare.ts', env, SERVER_NODE_ARGS);
    b.variantProcess.pid = srv.pid;
    try {
      await closedLoop(b.target(srv), { connections: opt.connections, durationMs: WARMUP_MS });
      ablation.push({ variant, m: await closedRun(b, `ablation bare+${variant}`, srv, false) });
    } finally {
      await srv.stop();
      b.variantProcess.pid = -1;
    }
  }
  return ablation;
}

/** (ii) Fixed rate against ours: open loop, latency from the scheduled send time. */
async function runFixedRate(b: Bench) {
  // The limiter's window emptied of the closed loop's entries.
  const { Redis } = await import('ioredis');
  const { rateLimitKey } = await import('../api/rateLimit');
  const r = new Redis(REDIS_URL);
  await r.del(rateLimitKey('read', b.s.workspaceId));
  r.disconnect();
  await b.quiet();
  step(`warm-up ours: ${WARMUP_MS / 1000} s open loop at ${opt.rate} req/s`);
  await openLoop(b.target(b.ours), { rate: opt.rate, durationMs: WARMUP_MS });
  return b.measureClean(`ours: ${RATE_DURATION_MS / 1000} s open loop at ${opt.rate} req/s`, b.ours, () =>
    openLoop(b.target(b.ours), { rate: opt.rate, durationMs: RATE_DURATION_MS }),
  );
}

const bench = await setUp().catch((err) => {
  console.error(`posts-list: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
try {
  await report(bench, await run(bench));
} catch (err) {
  console.error(`posts-list: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await bench.stopAll();
  await bench.releaseLock();
}
process.exit();
