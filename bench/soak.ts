// Chaos soak (issue 18): scheduled publishing and webhooks under a seeded schedule of faults, every
// effect checked against the simulator's and the receiver's records (bench/README.md "soak", docs/reliability.md).

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cleanups } from './harness/cleanups';
import { prng } from './harness/content';
import { benchFlags } from './harness/options';
import { reserveStack, runBench, ServiceProcesses, startApi as launchApi, startStack, type WorkerRun } from './harness/stack';
import { temporalKind } from './harness/temporal';
import { startReceiver, type Received } from './webhooks/receiver';
import { freePort } from '../tooling/ports';
import { launch, type Launched } from '../tooling/launcher';
import { report } from './soak/checks';
import { run } from './soak/run';

export const opt = benchFlags(
  'soak: scheduled publishing and webhooks under a seeded random schedule of faults.',
  {
    seed: { type: 'number', help: 'seed of the run (printed at start and end; default random)' },
    posts: { default: 200, min: 1, help: "posts scheduled (default 200; the issue's full size is 1000)" },
    accounts: { default: 10, min: 1, help: 'connected personal-brand accounts, spread over the workspaces (default 10; full 20)' },
    workspaces: { default: 3, min: 1, help: 'workspaces, each with a webhook endpoint subscribed to every post event' },
    duration: { default: 120, min: 20, arg: 'S', help: 'due times spread over S seconds after creation (default 120; full 600)' },
    'reschedule-share': { default: 0.15, arg: 'F', help: 'share of posts rescheduled later before they are due' },
    'unschedule-share': { default: 0.1, arg: 'F', help: 'share of posts unscheduled before they are due' },
    generations: { type: 'number', help: 'AI generations (built-in writer) at random times, all to end terminal (default: posts / 10)' },
    'fault-every': { default: 12, min: 1, arg: 'S', help: 'mean seconds between faults; each kind once (seeded order), then random' },
    faults: {
      default: 'all',
      arg: 'K,K',
      help: `fault kinds to draw from (default all): worker_kill, api_kill, net_transient,
        net_lost_response, net_timeout, receiver_outage, temporal_kill, redis_restart; with
        --temporal cluster also history_kill, matching_kill, frontend_kill (that service
        killed) and temporal_db_drop (its Postgres connections dropped)`,
    },
    temporal: { default: 'dev', arg: 'dev|cluster', help: 'the dev server (file-backed) or cluster tier (databases bench_soak_temporal*)' },
    api: { default: 2, min: 1, help: 'API processes behind the round-robin' },
    workers: { default: 1, min: 1, help: 'worker processes (default 1); worker_kill kills one, the others keep draining' },
    drain: { default: 240, min: 10, arg: 'S', help: 'at the end, wait for posts, webhooks, jobs until S seconds pass without progress' },
  },
  `Environment: BENCH_SOAK_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_soak).
Redis is a redis-server of the soak's own on a free port (restarted by redis_restart).`,
);

export const SEED = opt.seed !== undefined ? opt.seed >>> 0 : Math.floor(Math.random() * 2 ** 31);
const ACCOUNTS = Math.floor(opt.accounts);
/** The run's sizes and times, from the flags. */
export const S = {
  posts: Math.floor(opt.posts),
  workspaces: Math.min(Math.floor(opt.workspaces), ACCOUNTS),
  durationMs: opt.duration * 1000,
  faultEveryMs: opt['fault-every'] * 1000,
  drainMs: opt.drain * 1000,
  generations: Math.floor(opt.generations ?? Math.round(Math.floor(opt.posts) / 10)),
  cluster: temporalKind(opt.temporal) === 'cluster',
};

const DATABASE_URL = process.env.BENCH_SOAK_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_soak';
const TASK_QUEUE = 'bench-soak';
// The network client gives up after this long; the "timeout" fault holds createPost longer.
export const NETWORK_TIMEOUT_MS = 3_000;

export const rand = prng(SEED);
export const between = (a: number, b: number) => a + (b - a) * rand();
export const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
export const t0 = Date.now();
export const log = (text: string) => console.log(`+${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s  ${text}`);

// ── Environment (lib/config reads it once, at import; the children inherit it) ──────────────
const redisPort = await freePort();
const REDIS_URL = `redis://127.0.0.1:${redisPort}`;
const reserved = await reserveStack({
  kind: S.cluster ? 'cluster' : 'dev',
  databaseUrl: DATABASE_URL,
  redisUrl: REDIS_URL,
  taskQueue: TASK_QUEUE,
  clusterDatabase: 'bench_soak_temporal',
  // File-backed, so a SIGKILLed dev server restarts with its workflows, timers and histories.
  dbFile: true,
  env: {
    NETWORK_TIMEOUT_MS: String(NETWORK_TIMEOUT_MS),
    // The built-in writer: the soak measures the service, not a model (no LLM simulator runs here).
    LLM_WRITER: 'builtin',
    // The receiver is in this process, on loopback: the explicit development allowance.
    WEBHOOK_ALLOW_LOOPBACK: '1',
    // Retries shrunk so a delivery ends terminal within the run: waits 0.3, 1.8, 9, 54 s (lib/webhooks/schedule.ts), then failed.
    WEBHOOK_RETRY_BASE_MS: '300',
    WEBHOOK_MAX_ATTEMPTS: '5',
    WEBHOOK_TIMEOUT_MS: '3000',
    // Four processes share the machine's Postgres (with everyone else's): small pools.
    DB_POOL_MAX: process.env.DB_POOL_MAX ?? '5',
  },
});

// ── The webhook receiver: verifies signatures, records every request, fails during outages ──

/** A request the receiver read (its path names the endpoint: `/hooks/<workspace>`, or `…/dead`), and its answer. */
export const receipts: Array<Received & { answered: number }> = [];
/** Until when the receiver answers 503 (the receiver_outage fault). */
export const receiverOutage = { until: 0 };
const secrets = new Map<string, string>();
const receiver = await startReceiver(
  (hookPath) => secrets.get(hookPath) ?? '',
  (r) => {
    // The dead endpoint never recovers: its deliveries end failed, the endpoint disabled after five (spec 3.5, 6 rules 3 and 4).
    const answered = r.path.endsWith('/dead') || Date.now() < receiverOutage.until ? 503 : 204;
    receipts.push({ ...r, answered });
    return answered;
  },
);

// ── Redis, the APIs and the round-robin ──────────────────────────────────────────────────────

// Redis of its own, without persistence: a restart loses all it held (rate-limit windows, MCP sessions, key-cache invalidations).
export const redis: { p?: Launched } = {};

/** An API process; as a supervisor would, one that fails to start (Postgres out of connections, say) is started again. */
export async function startApi(slot: number) {
  for (let attempt = 1; ; attempt++) {
    try {
      return { slot, ...(await launchApi({ name: `API #${slot}`, ready: (port) => ({ port }), readyTimeoutMs: 90_000 })) };
    } catch (err) {
      if (attempt >= 30) throw err;
      stats.api.startFailures++;
      console.log(`API #${slot} failed to start (attempt ${attempt}): ${String(err).split('\n').slice(0, 2).join(' ')}; again in 2 s`);
      await sleep(2_000);
    }
  }
}

export const apis: Array<Awaited<ReturnType<typeof startApi>>> = [];
let rr = 0;
// One request through the round-robin. A refused or reset connection (a killed API) is retried on the next process with the
// same Idempotency-Key, so a write whose answer was lost is replayed, not repeated (spec 8): a definite answer, or null in time.
export async function call(method: string, urlPath: string, apiKey: string, body?: unknown, giveUpMs = 60_000) {
  const json = body !== undefined && { 'content-type': 'application/json', 'idempotency-key': `soak_${randomUUID().replace(/-/g, '')}` };
  for (const until = Date.now() + giveUpMs; Date.now() < until;) {
    const api = apis[rr++ % apis.length]!;
    if (!api.up()) {
      await sleep(50);
      continue;
    }
    try {
      const res = await fetch(`http://127.0.0.1:${api.port}${urlPath}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...json },
        body: json ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      // 409 "still being processed" under one key: the first attempt is still running somewhere.
      if (res.status < 500 && !(res.status === 409 && /still being processed/.test(text)))
        return { status: res.status, body: text ? JSON.parse(text) : null };
      await sleep(300);
    } catch {
      stats.api.retries++;
      await sleep(100);
    }
  }
  return null;
}

export const stats = {
  api: { retries: 0, startFailures: 0, restarts: 0 },
  worker: { restarts: 0, selfExits: 0 },
  generations: { accepted: 0, refused: {} as Record<string, number>, noAnswer: 0 },
  faults: {} as Record<string, number>,
  reschedules: { ok: 0, refused: 0, noAnswer: 0 },
  unschedules: { ok: 0, refused: 0, noAnswer: 0 },
};

runBench(
  () => `soak (seed ${SEED})`,
  async (cleanups) => {
    cleanups.push(async () => receiver.server.close());
    const soak = await setUp(cleanups);
    return report(soak, await run(soak));
  },
);

// ── Set up: the stores, Temporal, the simulator, the customers, the worker and the APIs ──────

export type Soak = Awaited<ReturnType<typeof setUp>>;

async function setUp(cleanups: Cleanups) {
  console.log(
    `soak — seed ${SEED}; ${S.posts} posts over ${S.durationMs / 1000} s, ${ACCOUNTS} accounts in ${S.workspaces} workspaces; ` +
      `reschedule ${opt['reschedule-share']}, unschedule ${opt['unschedule-share']}; a fault every ~${S.faultEveryMs / 1000} s`,
  );
  const redisArgs = ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  redis.p = await launch({ command: ['redis-server', ...redisArgs], ready: { port: redisPort }, readyTimeoutMs: 10_000 });
  cleanups.push(async () => void (await redis.p?.kill()));
  const { temporal, sim, connection, simulator } = await startStack(reserved, cleanups);
  log(`database ${new URL(DATABASE_URL).pathname.slice(1)} recreated, Redis of its own on ${REDIS_URL}`);
  log(
    `${temporal.cluster ? 'Temporal cluster (frontend, history, matching, worker processes on Postgres)' : 'Temporal dev server (file-backed)'} ${temporal.address}, network simulator ${simulator.url}, receiver :${receiver.port}`,
  );

  // Seed: workspaces, connected accounts (account a in workspace a % workspaces), a write key each, one endpoint per workspace.
  const { connectedWorkspace, webhookEndpoint } = await import('./harness/seed');
  const { EVENT_TYPES } = await import('../lib/outbox');
  const { db } = await import('../lib/db');
  const workspaces: Array<{ id: string; apiKey: string; projects: string[] }> = [];
  const endpointPath = new Map<string, string>();
  const person = (a: number) => ({ personId: `soak${a}`, name: `Soak Person ${a}`, vanityName: `soak-person-${a}` });
  const postEvents = EVENT_TYPES.filter((e: string) => e.startsWith('post.'));
  for (let w = 0; w < S.workspaces; w++) {
    const ws = await connectedWorkspace(sim, {
      name: `Soak ${w}`,
      accounts: Math.ceil((ACCOUNTS - w) / S.workspaces),
      person: (i) => person(w + i * S.workspaces),
      scopes: ['write'],
      keyName: 'soak',
    });
    // Workspace 0 also has an endpoint whose receiver never answers 2xx.
    for (const hookPath of w === 0 ? [`/hooks/${w}`, `/hooks/${w}/dead`] : [`/hooks/${w}`]) {
      const ep = await webhookEndpoint(ws.id, `http://127.0.0.1:${receiver.port}${hookPath}`, postEvents);
      secrets.set(hookPath, ep.secret);
      endpointPath.set(ep.id, hookPath);
    }
    workspaces.push({ id: ws.id, apiKey: ws.key, projects: ws.projectIds });
  }
  log(
    `seeded ${S.workspaces} workspaces, ${ACCOUNTS} connected accounts, ${S.workspaces + 1} webhook endpoints (every post.* event; one of them dead)`,
  );

  const procs = new ServiceProcesses({ name: 'soak', env: process.env });
  const { workers } = procs;
  const restarts: Promise<unknown>[] = [];
  // The soak supervises the worker: one it did not kill that exits (it cannot reach Temporal, say) is restarted and counted.
  const killedByUs = new Set<number>();
  let stopping = false;
  const launchWorker = async (): Promise<WorkerRun> => {
    const w = await procs.startWorker();
    w.child.once('exit', (code, signal) => {
      if (stopping || killedByUs.has(w.pid)) return;
      stats.worker.selfExits++;
      log(`worker pid ${w.pid} exited on its own (${signal ?? code}); restarting it`);
      restarts.push(sleep(1_000).then(launchWorker));
    });
    // One that exits before it is ready is restarted by its exit handler.
    await w.waitReady(connection, TASK_QUEUE, 240_000).catch((err) => {
      if (!w.exit) throw err;
    });
    return w;
  };
  cleanups.push(async () => {
    for (const a of apis) if (a.up()) a.child.kill('SIGTERM');
    stopping = true;
    for (const w of workers) if (!w.exit) await w.kill('SIGTERM');
  });
  for (let i = 0; i < Math.floor(opt.workers); i++) await launchWorker();
  for (let i = 0; i < Math.floor(opt.api); i++) apis.push(await startApi(i));
  log(`worker pids ${workers.map((w) => w.pid).join(', ')}, APIs on ${apis.map((a) => `:${a.port}`).join(', ')}`);
  return { temporal, sim, db, workspaces, endpointPath, workers, restarts, killedByUs, launchWorker };
}
