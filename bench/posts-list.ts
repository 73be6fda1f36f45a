// Bench: GET /v1/posts?projectId=…&limit=50, the real API against a bare Koa + pg server answering
// the same page in the same run (bench/README.md, "posts-list").

import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { withMaintenanceDb } from '../tooling/databases';
import { postContent, prng, titleOf } from './harness/content';
import { closeStores, resetStores, setBenchEnvironment } from './harness/database';
import { columns, f0, f1, mapValues, mean, REPO_ROOT, RESULTS_DIR, step, writeResults } from './harness/format';
import { closedLoop, getJson, openLoop, type RunResult, type Target } from './harness/load';
import { benchFlags } from './harness/options';
import { diff, machineInfo, postgresCpuGroup, snapshot, waitForQuiet, type Groups } from './harness/proc';
import { printAllocations, printProfile, summarizeHeapProfile, summarizeProfile } from './harness/profile';
import type { AllocationSummary, ProfileSummary } from './harness/profile';
import { startServer, type ServerHandle } from './harness/servers';
import type { StageTiming } from './harness/stages';

const TARGETS = { minRatio: 0.8, maxP99MsAtRate: 25 };
// The limiter runs its Redis script on every request but never answers 429.
const RATE_LIMIT_READ = '10000000';

const opt = benchFlags(
  'posts-list: GET /v1/posts?limit=50, real app vs bare Koa + pg.',
  {
    connections: { default: 32, min: 1, integer: true, help: 'closed-loop keep-alive connections' },
    duration: { default: 15, min: 0.001, arg: 'S', help: 'seconds per closed-loop measurement' },
    warmup: { default: 5, min: 0.001, arg: 'S', help: 'seconds of warm-up before each measurement' },
    rounds: { default: 2, min: 1, integer: true, help: 'closed-loop rounds; servers alternate order ABBA…' },
    rate: { default: 200, min: 0.001, arg: 'R', help: 'open-loop requests/s against the real app' },
    'rate-duration': { default: 20, min: 0.001, arg: 'S', help: 'seconds of the open-loop measurement' },
    posts: { default: 5000, min: 1, integer: true, help: 'posts seeded in the benchmarked project' },
    profile: { type: 'boolean', help: 'profile each server over one closed-loop run (figures carry the overhead) + stage timings' },
    'profile-survivors': { type: 'boolean', help: 'with --profile: allocations that survived scavenges (copied or promoted), by site' },
    ablation: { type: 'boolean', help: 'also measure bare + one piece of ours at a time (rate limiter, project, knex, handler)' },
    stages: { type: 'boolean', help: 'time each step of the request inside the app process, unloaded' },
    strict: { type: 'boolean', help: 'exit 1 when a target is missed' },
    'server-node-options': {
      default: '',
      arg: '="FLAGS"',
      help: 'extra Node flags for both servers, e.g.\n--server-node-options=--max-semi-space-size=64 (note the "=")',
    },
    'quiet-wait': { default: 120, arg: 'S', help: 'before each measurement, wait up to S s for others to use < 10% of the machine' },
    retries: {
      default: 3,
      integer: true,
      help: 'repeat a measurement during which other processes took ≥ 10% of the\nmachine, up to N times, keeping the cleanest (default 3; not with --profile)',
    },
  },
  `Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench),
             BENCH_REDIS_URL (default redis://127.0.0.1:6379/14; the database is flushed).`,
);

const ROUNDS = opt.profile ? 1 : opt.rounds;
const RETRIES = opt.profile ? 0 : opt.retries;
const QUIET_THRESHOLD = 0.1;
// Split on spaces: Node flags never contain any.
const SERVER_NODE_ARGS = opt['server-node-options'].split(' ').filter(Boolean);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14';
const BENCH_DB = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
setBenchEnvironment(DATABASE_URL, REDIS_URL, { RATE_LIMIT_READ });
const machine = machineInfo();

type Measured<R extends RunResult = RunResult> = Awaited<ReturnType<typeof measure<R>>>;

/** A run with the server's CPU and GC, every process's CPU and the bench database's statements, per request. */
async function measure<R extends RunResult>(server: ServerHandle, b: Pick<Bench, 'groups' | 'pgTransactions'>, run: () => Promise<R>) {
  const [x0, u0, s0] = [await b.pgTransactions(), await server.usage(), snapshot()];
  const result = await run();
  const [s1, u1] = [snapshot(), await server.usage()];
  const cpu = diff(s0, s1, await b.groups());
  // An idle Postgres 15+ backend reports its counters only after up to 10 s (PGSTAT_IDLE_INTERVAL).
  await sleep(10_500);
  const x1 = await b.pgTransactions();
  const n = Math.max(1, result.ok);
  const perReq = (ms: number) => Math.round((ms * 1000) / n);
  const d = (k: keyof typeof u0.gc) => u1.gc[k] - u0.gc[k];
  return {
    result,
    serverCpuUsPerReq: Math.round((u1.cpuUs - u0.cpuUs) / n),
    gc: {
      pauseUsPerReq: perReq(d('minorMs') + d('majorMs') + d('otherMs')),
      minorUsPerReq: perReq(d('minorMs')),
      majorUsPerReq: perReq(d('majorMs')),
      minorCount: d('minorCount'),
      majorCount: d('majorCount'),
      heapUsedMiB: Math.round((u1.heapUsedBytes / 1024 ** 2) * 10) / 10,
    },
    // Transactions (here statements, all autocommit) in the bench database per request.
    pgStatementsPerReq: Math.round(((x1 - x0) / n) * 100) / 100,
    cpuUsPerReq: cpu && result.ok ? mapValues({ ...cpu.cpuMs, unaccounted: cpu.unaccountedMs }, perReq) : null,
    cpu,
  };
}

/** Share of the machine's cores used by processes outside the bench during a measurement. */
const otherShare = (m: Measured) => (m.cpu ? (m.cpu.cpuMs.other! + m.cpu.unaccountedMs) / (m.result.durationS * 1000 * machine.cpus) : 0);
const pct = (share: number) => `${(share * 100).toFixed(0)}%`;
const noise = (m: Measured) => (otherShare(m) >= 0.05 ? ` — NOTE: other work took ${pct(otherShare(m))} of the machine` : '');

/** The benchmarked workspace (admin/provision) and its --posts posts, written in bulk, 2 % more soft-deleted. */
async function seed() {
  const { benchWorkspace } = await import('./harness/seed');
  const { db } = await import('../lib/db');
  const { newId } = await import('../lib/ids');
  const { workspace, project, key } = await benchWorkspace({
    name: 'Bench Co',
    project: { name: 'Bench Person', username: 'bench-person', connection: 'connected' },
    scopes: ['read'],
    keyName: 'bench',
  });
  const statuses = (await db()('post_statuses').where({ workspace_id: workspace.id })) as Array<{ id: string; category: string }>;
  // Status, its category, share.
  const MIX = [
    ['draft', 'draft', 0.4],
    ['published', 'published', 0.25],
    ['scheduled', 'scheduled', 0.15],
    ['suggested', 'suggested', 0.1],
    ['waitingApproval', 'review', 0.06],
    ['failed_to_publish', 'scheduled', 0.04],
  ] as const;
  const CONTENT_TYPES = ['PERSONAL', 'PERSONAL', 'PERSONAL', 'BUSINESS_EXTERNAL', 'EDUCATIONAL'];
  const rand = prng(20261121);
  const [now, day] = [Date.now(), 86_400_000];
  const deleted = Math.round(opt.posts * 0.02);
  const rows = Array.from({ length: opt.posts + deleted }, (_, i) => {
    let acc = 0;
    const u = rand();
    const [status, category] = MIX.find(([, , p]) => (acc += p) >= u) ?? MIX[0];
    const createdAt = new Date(now - Math.floor(rand() * 2 * 365 * day));
    const content = postContent(rand);
    const titled = rand() < 0.7;
    const published = status === 'published' ? new Date(createdAt.getTime() + day) : null;
    return {
      id: newId('post'),
      workspace_id: workspace.id,
      project_id: project.id,
      status,
      status_id: statuses.find((s) => s.category === category)?.id ?? null,
      title: titled ? titleOf(content) : '',
      title_auto: titled,
      content,
      content_type: CONTENT_TYPES[Math.floor(rand() * CONTENT_TYPES.length)],
      scheduled_at: status === 'scheduled' || status === 'failed_to_publish' ? new Date(now + Math.floor(rand() * 60 * day)) : published,
      published_at: published,
      created_at: createdAt,
      updated_at: rand() < 0.6 ? new Date(createdAt.getTime() + Math.floor(rand() * 7 * day)) : null,
      deleted_at: i >= opt.posts ? new Date(now - Math.floor(rand() * 30 * day)) : null,
    };
  });
  for (let i = 0; i < rows.length; i += 1000) await db()('posts').insert(rows.slice(i, i + 1000));
  await db().raw('vacuum analyze posts');
  await closeStores();
  const lengths = rows.map((r) => r.content.length);
  const contentChars = { min: Math.min(...lengths), max: Math.max(...lengths), mean: Math.round(mean(lengths)) };
  return { workspaceId: workspace.id, projectId: project.id, apiKey: key, posts: opt.posts, deletedPosts: deleted, contentChars };
}

/** The page a server answered, refused unless it is a full first page of 50 with a next cursor. */
function checkResponse(name: string, r: Awaited<ReturnType<typeof getJson>>) {
  const body = r.body as { data?: unknown[]; pagination?: { next_cursor: string | null; has_more: boolean } };
  if (r.status !== 200 || body?.data?.length !== 50 || !body.pagination?.has_more || !body.pagination.next_cursor)
    throw new Error(`${name} did not answer a full first page (${r.status}): ${JSON.stringify(r.body).slice(0, 500)}`);
  return JSON.stringify(body.data);
}

type Bench = Awaited<ReturnType<typeof setUp>>;

/** The stores and data, both servers answering the same page, and the measurement with its probes. */
async function setUp() {
  step(`database ${DATABASE_URL.replace(/\/\/([^:@/]*):[^@]*@/, '//$1:***@')} (reset), Redis ${REDIS_URL} (flushed)`);
  await resetStores(DATABASE_URL, REDIS_URL);
  step(`seeding: workspace + project + API key via admin/provision, ${f0(opt.posts)} posts`);
  const s = await seed();
  const { min, max, mean } = s.contentChars;
  step(`seeded ${f0(s.posts)} live + ${s.deletedPosts} soft-deleted posts, content ${min}-${max} chars (mean ${mean})`);
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
  const headers = { authorization: `Bearer ${s.apiKey}`, accept: 'application/json' };
  const target = (srv: ServerHandle): Target => ({ url: srv.baseUrl + requestPath, headers });
  const shown = requestPath.replace(s.projectId, '<project>');
  step(`servers: ours pid ${ours.pid} :${ours.port}, bare pid ${bare.pid} :${bare.port} — GET ${shown}`);
  if (SERVER_NODE_ARGS.length) step(`server Node flags: ${SERVER_NODE_ARGS.join(' ')}`);
  const [ro, rb] = await Promise.all([getJson(target(ours)), getJson(target(bare))]);
  if (checkResponse('ours', ro) !== checkResponse('bare', rb)) throw new Error('ours and bare return different data for the same page');
  if (ro.headers['x-ratelimit-limit'] !== RATE_LIMIT_READ)
    throw new Error(`ours reports X-RateLimit-Limit ${ro.headers['x-ratelimit-limit']}, expected ${RATE_LIMIT_READ}`);
  const bytes = { ours: JSON.stringify(ro.body).length, bare: JSON.stringify(rb.body).length };
  step(`both answer the same 50 posts (body ${f0(bytes.ours)} B ours / ${f0(bytes.bare)} B bare; ours' cursor is signed, so longer)`);
  step(`rate limiter active with RATE_LIMIT_READ=${f0(Number(RATE_LIMIT_READ))}/min: every request runs its Redis script, none is refused`);
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
  const sql = 'select xact_commit + xact_rollback as n from pg_stat_database where datname = $1';
  const pgTransactions = async () => Number((await pgAdmin.query<{ n: string }>(sql, [BENCH_DB])).rows[0]?.n ?? 0);
  return { s, env, ours, bare, stopAll, target, bytes, variantProcess, quiet, groups, pgTransactions };
}

/** `run` measured, repeated (--retries) while a busy neighbour shared the machine, the cleanest kept. */
async function measureClean<R extends RunResult>(b: Bench, label: string, srv: ServerHandle, run: () => Promise<R>) {
  let best: Measured<R> | null = null;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    await b.quiet();
    step(attempt === 0 ? label : `${label} — again (${attempt + 1}/${RETRIES + 1})`);
    const m = await measure(srv, b, run);
    if (!best || otherShare(m) < otherShare(best)) best = m;
    if (otherShare(m) < QUIET_THRESHOLD) break;
    if (attempt < RETRIES) console.log(`    discarded: other work took ${pct(otherShare(m))} of the machine (${f0(m.result.rps)} req/s)`);
  }
  return best!;
}

/** One closed-loop measurement of `srv` and its line; a capacity round's with its latency. */
async function closedRun(b: Bench, label: string, srv: ServerHandle, capacity: boolean) {
  const loop = () => closedLoop(b.target(srv), { connections: opt.connections, durationMs: opt.duration * 1000 });
  const tag = capacity && opt.profile ? ' (profiling)' : '';
  const m = await measureClean(b, `${label}: ${opt.duration} s closed loop, ${opt.connections} connections${tag}`, srv, loop);
  const r = m.result;
  const lat = capacity ? `, p50 ${f1(r.latencyMs.p50)} ms, p99 ${f1(r.latencyMs.p99)} ms, ${r.errors} errors` : '';
  console.log(
    `    ${f0(r.rps)} req/s${lat}, server CPU ${f0(m.serverCpuUsPerReq)} µs/req (GC ${f0(m.gc.pauseUsPerReq)}), ${m.pgStatementsPerReq} PG statements/req${noise(m)}`,
  );
  return m;
}

/** (i) Capacity: closed loop, ABBA rounds after a warm-up of each server; --ablation; (ii) fixed rate; stage timings. */
async function run(b: Bench) {
  const warmup = (srv: ServerHandle) => closedLoop(b.target(srv), { connections: opt.connections, durationMs: opt.warmup * 1000 });
  for (const srv of [b.ours, b.bare]) {
    step(`warm-up ${srv.name}: ${opt.warmup} s closed loop, ${opt.connections} connections`);
    await warmup(srv);
  }
  const closed: Record<'ours' | 'bare', Measured[]> = { ours: [], bare: [] };
  const profiles: Record<string, { summary: ProfileSummary; allocations: AllocationSummary; requests: number }> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const srv of round % 2 === 0 ? [b.ours, b.bare] : [b.bare, b.ours]) {
      if (opt.profile) await srv.profileStart({ survivorsOnly: opt['profile-survivors'] });
      const m = await closedRun(b, `round ${round + 1}/${ROUNDS} ${srv.name}`, srv, true);
      if (opt.profile) {
        const file = await srv.profileStop(path.join(RESULTS_DIR, 'profiles', `posts-list-${srv.name}.cpuprofile`));
        const allocations = summarizeHeapProfile(file.replace(/\.cpuprofile$/, '.heapprofile'), REPO_ROOT);
        profiles[srv.name] = { summary: summarizeProfile(file, REPO_ROOT), allocations, requests: m.result.ok };
      }
      closed[srv.name as 'ours' | 'bare'].push(m);
    }
  }
  // The bare server plus one piece of ours at a time.
  const ablation: Array<{ variant: string; m: Measured }> = [];
  for (const variant of opt.ablation ? ['ratelimit', 'project', 'knex', 'handler'] : []) {
    const env = { ...b.env, BENCH_BARE_ADD: variant };
    const srv = await startServer(`bare+${variant}`, 'bench/harness/serve-bare.ts', env, SERVER_NODE_ARGS);
    b.variantProcess.pid = srv.pid;
    try {
      await warmup(srv);
      ablation.push({ variant, m: await closedRun(b, `ablation bare+${variant}`, srv, false) });
    } finally {
      await srv.stop();
      b.variantProcess.pid = -1;
    }
  }
  let fixed: Measured<Awaited<ReturnType<typeof openLoop>>> | null = null;
  if (!opt.profile) {
    // Open loop against ours, latency from the scheduled send time; the limiter's window emptied of the closed loop's entries.
    const { Redis } = await import('ioredis');
    const { rateLimitKey } = await import('../api/rateLimit');
    const r = new Redis(REDIS_URL);
    await r.del(rateLimitKey('read', b.s.workspaceId));
    r.disconnect();
    await b.quiet();
    step(`warm-up ours: ${opt.warmup} s open loop at ${opt.rate} req/s`);
    await openLoop(b.target(b.ours), { rate: opt.rate, durationMs: opt.warmup * 1000 });
    fixed = await measureClean(b, `ours: ${opt['rate-duration']} s open loop at ${opt.rate} req/s`, b.ours, () =>
      openLoop(b.target(b.ours), { rate: opt.rate, durationMs: opt['rate-duration'] * 1000 }),
    );
  }
  let stages: StageTiming[] | null = null;
  if (opt.profile || opt.stages) {
    await b.quiet();
    step('stage timings inside the app process (unloaded, sequential)');
    const args = { token: b.s.apiKey, projectId: b.s.projectId, port: b.ours.port, iterations: 1000 };
    stages = await b.ours.call<StageTiming[]>('stages', args);
  }
  return { closed, profiles, ablation, fixed, stages };
}

/** The table, the targets, the profiles and the JSON results. */
function report(b: Bench, { closed, profiles, ablation, fixed, stages }: Awaited<ReturnType<typeof run>>) {
  const agg = (ms: Measured[]) => {
    const at = (f: (m: Measured) => number) => mean(ms.map(f));
    const cpu = ms[0]!.cpu;
    return {
      rps: at((m) => m.result.rps),
      p50: at((m) => m.result.latencyMs.p50),
      p99: at((m) => m.result.latencyMs.p99),
      max: Math.max(...ms.map((m) => m.result.latencyMs.max)),
      errors: ms.reduce((a, m) => a + m.result.errors, 0),
      serverCpuUsPerReq: at((m) => m.serverCpuUsPerReq),
      gcUsPerReq: at((m) => m.gc.pauseUsPerReq),
      pgStatementsPerReq: at((m) => m.pgStatementsPerReq),
      machineBusy: cpu ? at((m) => m.cpu!.machineBusy) : null,
      otherProcessesShare: cpu ? at(otherShare) : null,
      cpuUsPerReq: ms[0]!.cpuUsPerReq
        ? Object.fromEntries(Object.keys(ms[0]!.cpuUsPerReq).map((k) => [k, Math.round(at((m) => m.cpuUsPerReq![k]!))]))
        : null,
    };
  };
  const [A, B] = [agg(closed.ours), agg(closed.bare)];
  const ratio = A.rps / B.rps;
  const ratioMet = ratio >= TARGETS.minRatio;
  const p99Met = fixed ? fixed.result.latencyMs.p99 < TARGETS.maxP99MsAtRate : null;

  console.log(`\nGET /v1/posts?projectId=…&limit=50 — 50 posts/page, ~${f0(b.bytes.ours / 1024)} KiB/response`);
  const profiled = opt.profile ? ', PROFILED (figures carry profiler overhead)' : '';
  console.log(`closed loop: ${opt.connections} keep-alive connections, ${opt.duration} s × ${ROUNDS} round(s) per server${profiled}`);
  const closedRow = columns([22, 9, 9, 9, 9, 8, 16, 10, 14]);
  console.log(`  ${closedRow(['server', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors', 'srv CPU µs/req', 'of it GC', 'PG stmts/req'])}`);
  for (const [label, x] of Object.entries({ 'ours (real app)': A, 'bare Koa + pg': B })) {
    const figures = [f0(x.rps), f1(x.p50), f1(x.p99), f1(x.max), String(x.errors), f0(x.serverCpuUsPerReq), f0(x.gcUsPerReq)];
    console.log(`  ${closedRow([label, ...figures, x.pgStatementsPerReq.toFixed(2)])}`);
  }
  console.log(`  ratio ours/bare: ${(ratio * 100).toFixed(1)}%   target ≥ ${TARGETS.minRatio * 100}%   ${ratioMet ? 'MET' : 'MISSED'}`);
  if (A.cpuUsPerReq && B.cpuUsPerReq) {
    const keys = ['ours', 'bare', 'postgres', 'redis', 'generator', 'other', 'unaccounted'];
    const cpuRow = columns([22, ...keys.map(() => 10), 10]);
    console.log(`  CPU per request by process (µs), machine busy ${f0((A.machineBusy ?? 0) * 100)}% / ${f0((B.machineBusy ?? 0) * 100)}%:`);
    console.log(`  ${cpuRow(['', ...keys.map((k) => (k === 'unaccounted' ? 'unacct.' : k)), 'total'])}`);
    for (const [label, x] of Object.entries({ 'ours run': A.cpuUsPerReq, 'bare run': B.cpuUsPerReq }))
      console.log(`  ${cpuRow([label, ...keys.map((k) => f0(x[k] ?? 0)), f0(Object.values(x).reduce((a, b) => a + b, 0))])}`);
  }
  if (ablation.length) {
    // Machine CPU per request that the request path itself causes: its server, Postgres and
    // Redis (the generator and unrelated processes left out).
    const own = (m: Measured, server: string) =>
      m.cpuUsPerReq ? (m.cpuUsPerReq[server] ?? 0) + (m.cpuUsPerReq.postgres ?? 0) + (m.cpuUsPerReq.redis ?? 0) : 0;
    const base = mean(closed.bare.map((m) => own(m, 'bare')));
    console.log(`\nablation: the baseline plus one piece of ours (1 round of ${opt.duration} s each)`);
    const ablationRow = columns([22, 9, 9, 9, 8, 10, 9, 8, 7]);
    console.log(`  ${ablationRow(['server', 'req/s', 'vs bare', 'srv µs', 'pg µs', 'redis µs', 'path µs', 'Δ path', 'PG st'])}`);
    // A row over the rounds of a server (one round for a variant): `server` is its process group.
    const row = (label: string, ms: Measured[], server: string) => {
      const at = (f: (m: Measured) => number) => mean(ms.map(f));
      const cpu = (k: string) => f0(at((m) => m.cpuUsPerReq?.[k] ?? 0));
      const [rps, path] = [at((m) => m.result.rps), at((m) => own(m, server))];
      const [vsBare, delta] = [`${((rps / B.rps) * 100).toFixed(0)}%`, `${path - base >= 0 ? '+' : ''}${f0(path - base)}`];
      const serverUs = f0(at((m) => m.serverCpuUsPerReq));
      const statements = at((m) => m.pgStatementsPerReq).toFixed(2);
      console.log(`  ${ablationRow([label, f0(rps), vsBare, serverUs, cpu('postgres'), cpu('redis'), f0(path), delta, statements])}`);
    };
    row('bare', closed.bare, 'bare');
    for (const { variant, m } of ablation) row(`bare+${variant}`, [m], 'variant');
    row('ours', closed.ours, 'ours');
  }
  if (fixed) {
    const [r, l] = [fixed.result, fixed.result.latencyMs];
    console.log(`\nopen loop against ours: ${opt.rate} req/s for ${opt['rate-duration']} s (latency from scheduled send time)`);
    const lat = `p50 ${f1(l.p50)} ms, p90 ${f1(l.p90)} ms, p99 ${f1(l.p99)} ms, max ${f1(l.max)} ms`;
    console.log(`  achieved ${f1(r.rps)} req/s, ${r.ok} ok, ${r.errors} errors; ${lat}`);
    console.log(
      `  generator send lag p99 ${f1(r.sendLagMs.p99)} ms; server CPU ${f0(fixed.serverCpuUsPerReq)} µs/req (GC ${f0(fixed.gc.pauseUsPerReq)}); machine busy ${f0((fixed.cpu?.machineBusy ?? 0) * 100)}%${noise(fixed)}`,
    );
    console.log(`  p99 < ${TARGETS.maxP99MsAtRate} ms at ${opt.rate} req/s: ${p99Met ? 'MET' : 'MISSED'}`);
  }
  if (stages) {
    console.log('\nstages inside the app process (sequential, no load; wall includes waiting on Postgres/Redis):');
    const stageRow = columns([56, 13, 14, 13]);
    console.log(`  ${stageRow(['stage', 'wall p50 µs', 'wall mean µs', 'CPU µs/call'])}`);
    for (const t of stages) console.log(`  ${stageRow([t.stage, f0(t.wallP50Us), f0(t.wallMeanUs), f0(t.cpuUsPerCall)])}`);
  }
  for (const [name, p] of Object.entries(profiles)) {
    printProfile(`CPU profile, ${name} server`, p.summary, p.requests);
    const title = opt['profile-survivors'] ? 'Survivors of young-generation collections' : 'Allocation profile';
    printAllocations(`${title}, ${name} server`, p.allocations, p.requests);
  }

  const roundJson = (m: Measured) => {
    const { result, cpu, ...figures } = m;
    return { ...result, ...figures, machineBusy: cpu?.machineBusy ?? null, otherProcessesShare: otherShare(m) };
  };
  const out = writeResults(opt.profile ? 'posts-list.profile' : 'posts-list', {
    bench: 'posts-list',
    finishedAt: new Date().toISOString(),
    wallSeconds: Math.round((Date.now() - started) / 1000),
    machine,
    profiled: opt.profile,
    request: { method: 'GET', path: '/v1/posts?projectId=<project>&limit=50', responseBytes: b.bytes },
    settings: {
      serverNodeOptions: SERVER_NODE_ARGS,
      connections: opt.connections,
      durationS: opt.duration,
      warmupS: opt.warmup,
      rounds: ROUNDS,
      rate: opt.rate,
      rateDurationS: opt['rate-duration'],
      rateLimitRead: Number(RATE_LIMIT_READ),
      authCacheMs: Number(process.env.AUTH_CACHE_MS ?? 4000),
      database: BENCH_DB,
      redisDb: new URL(REDIS_URL).pathname.slice(1) || '0',
    },
    seed: { posts: b.s.posts, deletedPosts: b.s.deletedPosts, contentChars: b.s.contentChars },
    throughput: { ours: { ...A, rounds: closed.ours.map(roundJson) }, bare: { ...B, rounds: closed.bare.map(roundJson) }, ratio },
    fixedRate: fixed ? roundJson(fixed) : null,
    targets: { ratio: { min: TARGETS.minRatio, met: ratioMet }, p99AtRate: { maxMs: TARGETS.maxP99MsAtRate, rate: opt.rate, met: p99Met } },
    ablation: ablation.length ? ablation.map(({ variant, m }) => ({ variant: `bare+${variant}`, ...roundJson(m) })) : null,
    stages,
    profiles: Object.keys(profiles).length ? profiles : null,
  });
  console.log(`\nresults: ${path.relative(process.cwd(), out)}`);
  if (opt.strict && (!ratioMet || p99Met === false)) process.exitCode = 1;
}

const started = Date.now();
console.log(`posts-list bench — ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
// One run per database at a time: an advisory lock held by a session on the maintenance database.
await withMaintenanceDb(DATABASE_URL, async (lock) => {
  lock.on('error', () => undefined);
  const sql = 'select pg_try_advisory_lock(hashtext($1)) as ok';
  for (let announced = false; !(await lock.query(sql, [`content-scheduler bench ${BENCH_DB}`])).rows[0]?.ok; announced = true) {
    if (!announced) step(`another run is using ${BENCH_DB}; waiting for it to finish`);
    await sleep(5000);
  }
  const b = await setUp();
  try {
    report(b, await run(b));
  } finally {
    await b.stopAll();
  }
}).catch((err) => {
  console.error(`posts-list: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
process.exit();
