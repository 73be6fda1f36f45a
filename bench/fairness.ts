// Bench: does one workspace's burst delay another workspace's work? bench/README.md "fairness".

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import type { Cleanups } from './harness/cleanups';
import { postContent, prng, shuffle } from './harness/content';
import { f0, loadAverage, quantile, s1, step } from './harness/format';
import { benchFlags, COUNT } from './harness/options';
import { machineInfo, until } from './harness/proc';
import { apiClient, NO_FAIRNESS_FLAG, reserveStack, runBench, startStack } from './harness/stack';
import { temporalKind } from './harness/temporal';
import { breakdown, PHASES, timelines } from './publishing/history';
import { startReceiver, type Received } from './webhooks/receiver';
import { freePort } from '../tooling/ports';

const TARGET = 1.5;

const opt = benchFlags(
  "fairness: the quiet workspaces' lag beside a noisy workspace's burst, over their lag alone.",
  {
    scenarios: { default: 'publishing,generation,webhooks', arg: 'LIST', help: 'the scenarios to run, in that order' },
    burst: { default: 10000, ...COUNT, help: 'posts the noisy workspace schedules for the minute' },
    quiet: { default: 10, ...COUNT, help: 'quiet workspaces' },
    'quiet-posts': { default: 20, ...COUNT, help: 'posts each quiet workspace schedules for the same minute' },
    'noisy-projects': { default: 10, ...COUNT, help: "the noisy workspace's connected accounts its posts go round" },
    jobs: { default: 200, ...COUNT, help: 'generation jobs the noisy workspace queues (default 200); each quiet one queues 1' },
    events: { default: 2000, ...COUNT, help: "events for the noisy workspace's slow, failing endpoint" },
    'quiet-events': { default: 20, ...COUNT, help: "events for each quiet workspace's healthy endpoint" },
    'slow-ms': { default: 1000, integer: true, arg: 'MS', help: 'how long the noisy endpoint takes to answer' },
    lead: { default: 0, arg: 'S', help: 'seconds from creation to the due minute (default 1.5 × creation time at the last rate + 15 s)' },
    timeout: { default: 900, ...COUNT, arg: 'S', help: 'give up on a phase after S seconds' },
    'no-fairness': NO_FAIRNESS_FLAG,
    temporal: {
      default: 'dev',
      arg: 'dev|cluster',
      help: 'the dev server in memory, or the cluster tier on Postgres (databases bench_fair_temporal*\nand the production task queue name; --no-fairness there only drops the keys)',
    },
    strict: { type: 'boolean', help: `exit 1 when a scenario misses the target (quiet p99 with noisy ≤ ${TARGET}× alone)` },
  },
  `Environment: BENCH_FAIR_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_fair,
             dropped and recreated), BENCH_FAIR_REDIS_URL (default redis://127.0.0.1:6379/9, flushed),
             DB_POOL_MAX (each service process's pool, lib/config.ts; 10 leaves room on a shared Postgres).`,
);

const FAIRNESS = !opt['no-fairness'];
const TEMPORAL = temporalKind(opt.temporal);
// On the cluster the production queue name, so that its dynamic config's per-queue settings apply.
const TASK_QUEUE = TEMPORAL === 'cluster' ? 'content-scheduler' : 'bench-fairness';
const DATABASE_URL = process.env.BENCH_FAIR_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_fair';
const REDIS_URL = process.env.BENCH_FAIR_REDIS_URL ?? 'redis://127.0.0.1:6379/9';
const SCENARIOS = { publishing: publishingPhase, generation: generationPhase, webhooks: webhooksPhase };
type Scenario = keyof typeof SCENARIOS;
const scenarios = opt.scenarios.split(',').map((s) => s.trim()) as Scenario[];
for (const s of scenarios) if (!(s in SCENARIOS)) throw new Error(`unknown scenario ${s}; known: ${Object.keys(SCENARIOS).join(', ')}`);

type Tenant = { id: string; key: string; projectIds: string[] };
type Ctx = Awaited<ReturnType<typeof setUp>>;
/** The quiet lags; the noisy work's first request (or due instant) to its last item done, s; items left at the timeout; for posts, where the quiet lag went. */
type Phase = { lagsMs: number[]; noisyDrainS?: number; unfinished: number; notes: string[]; breakdown?: ReturnType<typeof breakdown> };

const pct = (values: number[], p: number) => quantile(values, p / 100) ?? NaN;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const lags = (p: Phase) => `p50 ${secs(pct(p.lagsMs, 50))}, p99 ${secs(pct(p.lagsMs, 99))}`;
const log = (line: string) => console.log(`  ${line}`);

runBench(
  () => 'fairness',
  async (cleanups) => {
    const m = machineInfo();
    console.log(
      `fairness bench — ${m.cpus} × ${m.cpuModel}, Node ${m.node}, load average ${loadAverage(1)} at start; ` +
        `task queue fairness ${FAIRNESS ? 'ON (matching.enableFairness, starts keyed by workspace)' : 'OFF (--no-fairness: first come, first served)'}`,
    );
    const ctx = await setUp(cleanups);
    // One item down every path before any clock starts, on a copy of the context (one post is no creation rate).
    const t0 = Date.now();
    const warm = { ...ctx, quiet: ctx.quiet.slice(0, 1), sizes: { ...opt, 'quiet-posts': 1, 'quiet-events': 1, lead: 5, timeout: 180 } };
    for (const [name, phase] of Object.entries(SCENARIOS))
      if ((await phase(warm, false)).unfinished) throw new Error(`warm-up: the ${name} item was not done within 180 s (is the worker up?)`);
    await sleep(1000);
    step(`warm-up: one post, one generation and one webhook through the service in ${s1(Date.now() - t0)} s`);
    let missed = 0;
    for (const scenario of scenarios) {
      step(`${scenario}: the quiet workspaces alone`);
      const alone = await SCENARIOS[scenario](ctx, false);
      step(`${scenario}: the same beside the noisy workspace`);
      if (!report(scenario, alone, await SCENARIOS[scenario](ctx, true))) missed++;
    }
    console.log(`load average at the end ${loadAverage(1)} (a shared machine: compare ratios within one run)`);
    return opt.strict && missed ? 1 : 0;
  },
);

function report(scenario: Scenario, alone: Phase, noisy: Phase): boolean {
  const ratio = pct(noisy.lagsMs, 99) / pct(alone.lagsMs, 99);
  const size = {
    publishing: `${opt.burst} posts`,
    generation: `${opt.jobs} jobs`,
    webhooks: `${opt.events} events to a slow, failing endpoint`,
  };
  console.log(
    `  quiet lag alone: ${lags(alone)} (${alone.lagsMs.length} items); beside the noisy workspace (${size[scenario]}): ${lags(noisy)}` +
      (noisy.noisyDrainS !== undefined ? `; the noisy workspace's last item done after ${noisy.noisyDrainS.toFixed(1)} s` : ''),
  );
  if (alone.breakdown && noisy.breakdown) {
    console.log(`  where the quiet lag went (their publish workflows' histories), p50 / p99 ms: alone | beside the noisy workspace`);
    const ms = (v: number | null) => (v === null ? '–' : f0(v));
    for (const [key, [label]] of Object.entries(PHASES)) {
      const [a, n] = [alone.breakdown[key as keyof typeof PHASES], noisy.breakdown[key as keyof typeof PHASES]];
      // The publish step runs as a local activity inside the workflow task (workflows/publishPost.ts): no activity events.
      if (a.p50 !== null || n.p50 !== null)
        console.log(`    ${label.trim().padEnd(40)} ${`${ms(a.p50)} / ${ms(a.p99)}`.padStart(15)} | ${ms(n.p50)} / ${ms(n.p99)}`);
    }
  }
  for (const note of [...alone.notes, ...noisy.notes]) console.log(`  ! ${note}`);
  if (alone.unfinished || noisy.unfinished)
    console.log(`  ! unfinished within --timeout: ${alone.unfinished} alone, ${noisy.unfinished} with noisy`);
  console.log(
    `fairness ${scenario}: quiet p99 with noisy / alone: ${ratio.toFixed(2)}× (target ≤ ${TARGET}×, fairness ${FAIRNESS ? 'on' : 'off'})`,
  );
  return ratio <= TARGET;
}

async function setUp(cleanups: Cleanups) {
  const reserved = await reserveStack({
    kind: TEMPORAL,
    databaseUrl: DATABASE_URL,
    redisUrl: REDIS_URL,
    taskQueue: TASK_QUEUE,
    clusterDatabase: 'bench_fair_temporal',
    fairness: FAIRNESS,
    // The receivers are local: the explicit loopback allowance.
    env: { LLM_WRITER: 'builtin', WEBHOOK_ALLOW_LOOPBACK: '1' },
  });
  const [port, mcpPort, metricsPort, workerMetrics] = await Promise.all(Array.from({ length: 4 }, () => freePort()));
  step(`database ${new URL(DATABASE_URL).pathname.slice(1)} (recreated, migrated), Redis ${REDIS_URL} (flushed)`);
  const { temporal, simulator, client } = await startStack(reserved, cleanups);
  step(
    TEMPORAL === 'cluster'
      ? `${temporal.describe}; task queue ${TASK_QUEUE}${FAIRNESS ? ', matching.enableFairness=true' : ', starts without fairness keys'}`
      : `Temporal dev server ${temporal.address} (in memory)${FAIRNESS ? ' with matching.enableFairness=true' : ' without fairness'}`,
  );
  const receivers = await startReceivers(opt['slow-ms']);
  cleanups.push(() => receivers.close());

  const { db } = await import('../lib/db');
  const { connectedWorkspace, webhookEndpoint } = await import('./harness/seed');
  const { EVENT_TYPES } = await import('../lib/outbox');
  // Its people numbered across the workspaces, the noisy one's first.
  const tenant = async (name: string, accounts: number, url: string, first: number): Promise<Tenant> => {
    const person = (i: number) => ({ personId: `fair${first + i}`, name: `Fair Person ${first + i}`, vanityName: `fair-${first + i}` });
    const o = { name, accounts, person, scopes: ['read', 'write'], keyName: 'fairness bench' };
    const ws = await connectedWorkspace(simulator.control, o);
    // Caps high enough never to refuse a generation.
    await db()('workspaces').where({ id: ws.id }).update({ daily_spend_cap_cents: 1_000_000_000, weekly_ai_budget_cents: 1_000_000_000 });
    await webhookEndpoint(ws.id, url, EVENT_TYPES);
    return ws;
  };
  const noisy = await tenant('Noisy Co', opt['noisy-projects'], receivers.slowUrl, 0);
  const quiet: Tenant[] = [];
  for (let i = 0; i < opt.quiet; i++) quiet.push(await tenant(`Quiet ${i + 1}`, 1, receivers.healthyUrl, opt['noisy-projects'] + i));
  step(
    `workspaces: 1 noisy (${opt['noisy-projects']} connected accounts, endpoint slow and failing) and ${opt.quiet} quiet (1 account, healthy endpoint each)`,
  );

  const { startFleet } = await import('../tooling/serviceFleet');
  const apis = [{ port: port!, mcpPort: mcpPort!, metricsPort: metricsPort! }];
  const fleet = await startFleet({ env: process.env, apis, workers: [workerMetrics!], log: () => {} });
  cleanups.push(() => fleet.stop());
  step(`service: API pid ${fleet.apis[0]!.child.pid} on ${port}, worker pid ${fleet.workers[0]!.child.pid} (tooling/serviceFleet.ts)`);
  const api = apiClient(port!, 64);
  cleanups.push(async () => api.close());
  // A port found free at the start may have been taken by another process before the API bound
  // it (a shared machine): make sure the one listening is ours (it stamps every answer).
  const probe = await fetch(`http://127.0.0.1:${port}/v1/posts`);
  if (!probe.headers.get('x-request-id'))
    throw new Error(`port ${port} is answered by another process (${probe.status} ${(await probe.text()).slice(0, 80)}); run again`);
  await probe.body?.cancel();
  /** createdPerS: posts created a second in the last phase (the next phase's due minute leaves room for its creation). */
  return { api, db: db(), temporal: client, noisy, quiet, sizes: opt, receivers, createdPerS: 10 };
}

/** Polls until `done()` counts `n` or the timeout passes; answers how many were left. */
async function waitDone(ctx: Ctx, n: number, done: () => Promise<number>): Promise<number> {
  let d = 0;
  await until(async () => (d = await done()) >= n, ctx.sizes.timeout * 1000, 500);
  return Math.max(0, n - d);
}

const POSTS = { table: 'posts', ended: ['published', 'failed'], done: 'published', lag: 'published_at - scheduled_at', at: 'published_at' };
const JOBS = { table: 'jobs', ended: ['DONE', 'FAILED', 'CANCELLED'], done: 'DONE', lag: 'completed_at - created_at', at: 'completed_at' };

/** Until every row has an `ended` status: the quiet rows' lags (`lag`) and when after `fromMs` the last noisy one was `done` (`at`). */
async function settle(ctx: Ctx, q: typeof POSTS, quietIds: string[], noisyIds: string[], fromMs: number): Promise<Phase> {
  const all = [...quietIds, ...noisyIds];
  const ended = async () => Number((await ctx.db(q.table).whereIn('id', all).whereIn('status', q.ended).count('* as n').first())!.n);
  const unfinished = await waitDone(ctx, all.length, ended);
  const sql = `select extract(epoch from ${q.lag}) * 1000 as lag, ${q.at} as at from ${q.table} where id = any(?) and status = ?`;
  const rows = async (ids: string[]) => (await ctx.db.raw(sql, [ids, q.done])).rows as Array<{ lag: string; at: Date }>;
  const noisy = noisyIds.length ? await rows(noisyIds) : [];
  return {
    lagsMs: (await rows(quietIds)).map((r) => Number(r.lag)),
    noisyDrainS: noisy.length ? (Math.max(...noisy.map((r) => new Date(r.at).getTime())) - fromMs) / 1000 : undefined,
    unfinished,
    notes: [],
  };
}

// ── Publishing: posts due in the same minute ─────────────────────────────────────────────────

async function publishingPhase(ctx: Ctx, withNoisy: boolean): Promise<Phase> {
  const rand = prng(withNoisy ? 2 : 1);
  const items: Array<{ t: Tenant; projectId: string; quiet: boolean }> = [];
  const add = (t: Tenant, n: number, quiet: boolean) => {
    for (let i = 0; i < n; i++) items.push({ t, projectId: t.projectIds[i % t.projectIds.length]!, quiet });
  };
  for (const t of ctx.quiet) add(t, ctx.sizes['quiet-posts'], true);
  if (withNoisy) add(ctx.noisy, ctx.sizes.burst, false);
  // A random interleaving: the start delay holds every workflow to the minute, whatever the order of creation.
  shuffle(items, rand);
  // Room for creating every post at the last phase's rate, and half again.
  const leadMs = (ctx.sizes.lead || 15 + (1.5 * items.length) / ctx.createdPerS) * 1000;
  const t0 = Date.now();
  const due = new Date(Math.ceil((t0 + leadMs) / 1000) * 1000);
  const ids = { quiet: [] as string[], noisy: [] as string[] };
  await pLimit(20).map(items, async ({ t, projectId, quiet }) => {
    const body = { projectId, content: postContent(rand), scheduledFor: due.toISOString() };
    ids[quiet ? 'quiet' : 'noisy'].push((await ctx.api.send('POST', '/v1/posts', t.key, body)).id);
  });
  const createdBy = Date.now();
  ctx.createdPerS = items.length / Math.max(0.001, (createdBy - t0) / 1000);
  log(
    `${items.length} posts created in ${s1(createdBy - t0)} s, due ${due.toISOString().slice(11, 19)} (${s1(due.getTime() - createdBy)} s later)`,
  );
  const phase = await settle(ctx, POSTS, ids.quiet, ids.noisy, due.getTime());
  const { workflowIds } = await import('../lib/temporal/client');
  const histories = ids.quiet.map((id) => ({ workflowId: workflowIds.publish(id), postId: id, dueMs: due.getTime() }));
  const quietTimelines = await timelines(ctx.temporal, histories);
  phase.breakdown = breakdown(quietTimelines.ok);
  if (quietTimelines.errors) phase.notes.push(`${quietTimelines.errors} quiet publish workflow histories could not be read`);
  if (createdBy > due.getTime()) phase.notes.push(`creation ended ${s1(createdBy - due.getTime())} s after the due minute: raise --lead`);
  return phase;
}

// ── Generation: jobs queued at once ──────────────────────────────────────────────────────────

const SOURCE =
  'We moved our release checklist into the deployment pipeline this quarter. Every deploy now runs the same twelve checks, ' +
  'from schema drift to feature-flag hygiene. Rollbacks dropped by half, and on-call pages after releases fell to monthly.';

async function generationPhase(ctx: Ctx, withNoisy: boolean): Promise<Phase> {
  const generate = async (t: Tenant, i: number): Promise<string> => {
    const body = { projectId: t.projectIds[0], source: { type: 'text', text: `${SOURCE} (#${i})` } };
    return (await ctx.api.send('POST', '/v1/posts/generations', t.key, body)).id;
  };
  const t0 = Date.now();
  // The noisy workspace's jobs are queued first: first come, first served would run them first.
  const noisyIds = withNoisy ? await pLimit(50).map([...Array(ctx.sizes.jobs).keys()], (i) => generate(ctx.noisy, i)) : [];
  const quietIds = await Promise.all(ctx.quiet.map((t, i) => generate(t, i)));
  log(`${noisyIds.length + quietIds.length} generation jobs accepted in ${s1(Date.now() - t0)} s`);
  return settle(ctx, JOBS, quietIds, noisyIds, t0);
}

// ── Webhooks: a slow, failing endpoint beside healthy ones ───────────────────────────────────

/** The healthy receiver answers 204 and records when each Webhook-Id first arrived; the noisy one answers after `slowMs`, every other time 500 (never auto-disabled). */
async function startReceivers(slowMs: number) {
  const received = new Map<string, number>();
  let slow = 0;
  const record = (r: Received) => void (r.webhookId && !received.has(r.webhookId) && received.set(r.webhookId, r.at));
  const { server: healthy } = await startReceiver(() => '', record);
  const noisy = createServer((req, res) =>
    req.resume().on('end', () => {
      const n = ++slow;
      setTimeout(() => res.writeHead(n % 2 ? 500 : 204).end(), slowMs);
    }),
  );
  await new Promise<void>((resolve) => noisy.listen(0, '127.0.0.1', resolve));
  const url = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const close = (server: Server) => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return {
    healthyUrl: url(healthy),
    slowUrl: url(noisy),
    received,
    slowRequests: () => slow,
    close: async () => void (await Promise.all([close(healthy), close(noisy)])),
  };
}

async function webhooksPhase(ctx: Ctx, withNoisy: boolean): Promise<Phase> {
  const { emitEvents } = await import('../lib/outbox');
  const events = (t: Tenant, from: number, n: number) => {
    const batch = Array.from({ length: n }, (_, k) => ({ workspaceId: t.id, type: 'post.updated' as const, data: { n: from + k } }));
    return emitEvents(ctx.db, batch);
  };
  const { receivers } = ctx;
  if (withNoisy) {
    for (let i = 0; i < ctx.sizes.events; i += 1000) await events(ctx.noisy, i, Math.min(1000, ctx.sizes.events - i));
    // The quiet events come while the noisy endpoint's slow, failing deliveries and retries are in flight.
    await until(async () => receivers.slowRequests() >= Math.min(50, ctx.sizes.events), 15_000, 100);
  }
  // Then every quiet workspace's events, each workspace's in one commit, as its changes land.
  const emitted = new Map<string, number>();
  await Promise.all(
    ctx.quiet.map(async (t) => {
      const ids = await events(t, 0, ctx.sizes['quiet-events']);
      const at = Date.now();
      for (const id of ids) emitted.set(id, at);
    }),
  );
  const slowBefore = receivers.slowRequests();
  const unfinished = await waitDone(ctx, emitted.size, async () => [...emitted.keys()].filter((id) => receivers.received.has(id)).length);
  if (withNoisy) log(`the slow endpoint had ${receivers.slowRequests() - slowBefore} requests meanwhile (${ctx.sizes.events} events)`);
  return {
    lagsMs: [...emitted].filter(([id]) => receivers.received.has(id)).map(([id, at]) => receivers.received.get(id)! - at),
    unfinished,
    notes: [],
  };
}
