// Chaos soak (issue 18): scheduled posts, reschedules and unschedules through two API processes
// behind the soak's own round-robin, webhooks to a local receiver, and a seeded random schedule
// of faults while they go out. At the end everything is checked against the network
// simulator's and the receiver's own records; the script exits 1 on any violation.
//
//   npm run bench -- soak                          default: 200 posts over 2 min, 10 accounts, 3 workspaces
//   npm run bench -- soak --seed 1234              replay a run's fault and operation schedule
//   npm run bench -- soak --posts 1000 --accounts 20 --duration 600    the issue's full size
//   npm run bench -- soak --help                   every option
//   npm run bench -- soak --temporal cluster --api 2 --workers 2    on the cluster tier (issue 27):
//                                                  Temporal as four service processes on Postgres,
//                                                  each killed and restarted on its own
//
// Everything is the soak's own: Postgres database content_scheduler_bench_soak (dropped and
// recreated), a redis-server on a free port (never the machine's shared Redis: the soak restarts
// it), a Temporal dev server (file-backed), the network simulator
// and the webhook receiver in this process; the worker (workers/main.ts, which also starts the
// webhook relay and the reconciler) and the two API processes (api/main.ts) are children,
// exactly as production runs them. Not part of `npm test`. See docs/reliability.md.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Cleanups } from './harness/cleanups';
import { prng } from './harness/content';
import { recreateDatabase, setPublishingEnvironment } from './harness/database';
import { benchOptions, numberOption } from './harness/options';
import { verifyWebhookSignature } from './harness/webhookSignature';
import { startWorker, type WorkerRun } from './publishing/worker';
import { freePort, portAcceptsConnections } from '../tooling/ports';
import { resolveTemporalBinary, startTemporalDevServer, type DevServer } from '../tooling/temporalBinary';
import { dropClusterDatabases, freeClusterPorts, startTemporalCluster, type TemporalCluster } from '../tooling/temporalCluster';

const opt = benchOptions(
  {
    seed: { type: 'string' },
    posts: { type: 'string', default: '200' },
    accounts: { type: 'string', default: '10' },
    workspaces: { type: 'string', default: '3' },
    duration: { type: 'string', default: '120' },
    generations: { type: 'string' },
    'reschedule-share': { type: 'string', default: '0.15' },
    'unschedule-share': { type: 'string', default: '0.1' },
    'fault-every': { type: 'string', default: '12' },
    drain: { type: 'string', default: '240' },
    faults: { type: 'string', default: 'all' },
    temporal: { type: 'string', default: 'dev' },
    api: { type: 'string', default: '2' },
    workers: { type: 'string', default: '1' },
  },
  `soak: scheduled publishing and webhooks under a seeded random schedule of faults.

Options:
  --seed N               seed of the run (printed at start and end; default random)
  --posts N              posts scheduled (default 200; the issue's full size is 1000)
  --accounts N           connected personal-brand accounts, spread over the workspaces (default 10; full 20)
  --workspaces N         workspaces, each with a webhook endpoint subscribed to every post event (default 3)
  --duration S           due times spread over S seconds after creation (default 120; full 600)
  --reschedule-share F   share of posts rescheduled later before they are due (default 0.15)
  --unschedule-share F   share of posts unscheduled before they are due (default 0.1)
  --generations N        AI post generations (built-in writer) requested at random times during
                         the run; every job must end terminal (default: posts / 10)
  --fault-every S        mean seconds between injected faults (default 12); each kind comes once
                         (in a seeded order) before kinds are drawn at random
  --faults K,K           fault kinds to draw from (default all): worker_kill, api_kill, net_transient,
                         net_lost_response, net_timeout, receiver_outage, temporal_kill, redis_restart;
                         with --temporal cluster also history_kill, matching_kill, frontend_kill (one
                         service SIGKILLed and restarted on its own) and temporal_db_drop (every
                         Postgres connection of the Temporal server terminated)
  --temporal dev|cluster the Temporal dev server (file-backed; default) or the cluster tier
                         (tooling/temporalCluster.ts, databases bench_soak_temporal*)
  --api N                API processes behind the round-robin (default 2)
  --workers N            worker processes (default 1); worker_kill kills one, the others keep draining
  --drain S              after the faults and the last due time, wait for publishing, webhooks and jobs
                         until S seconds pass without progress (default 240)

Environment: BENCH_SOAK_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_soak).
             Redis is a redis-server of the soak's own on a free port (restarted by redis_restart).`,
);

const num = (name: keyof typeof opt, min = 0) => numberOption(opt, name, { min });
const SEED = opt.seed !== undefined ? num('seed') >>> 0 : Math.floor(Math.random() * 2 ** 31);
const POSTS = Math.floor(num('posts', 1));
const ACCOUNTS = Math.floor(num('accounts', 1));
const WORKSPACES = Math.min(Math.floor(num('workspaces', 1)), ACCOUNTS);
const DURATION_MS = num('duration', 20) * 1000;
const RESCHEDULE_SHARE = num('reschedule-share');
const UNSCHEDULE_SHARE = num('unschedule-share');
const FAULT_EVERY_MS = num('fault-every', 1) * 1000;
const DRAIN_MS = num('drain', 10) * 1000;
const GENERATIONS = opt.generations !== undefined ? Math.floor(num('generations')) : Math.round(POSTS / 10);
if (opt.temporal !== 'dev' && opt.temporal !== 'cluster') throw new Error('--temporal must be dev or cluster');
const CLUSTER = opt.temporal === 'cluster';
const API_COUNT = Math.floor(num('api', 1));
const WORKER_COUNT = Math.floor(num('workers', 1));

const DATABASE_URL = process.env.BENCH_SOAK_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_soak';
const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
const TASK_QUEUE = 'bench-soak';
// The network client gives up after this long; the "timeout" fault holds createPost longer.
const NETWORK_TIMEOUT_MS = 3_000;

const rand = prng(SEED);
const between = (a: number, b: number) => a + (b - a) * rand();
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const t0 = Date.now();
const ts = () => `+${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s`;
const log = (text: string) => console.log(`${ts()}  ${text}`);

// ── Environment (lib/config reads it once, at import; the children inherit it) ──────────────
const clusterPorts = CLUSTER ? await freeClusterPorts() : null;
const temporalPort = clusterPorts ? clusterPorts.frontend : await freePort();
const simPort = await freePort();
const redisPort = await freePort();
const REDIS_URL = `redis://127.0.0.1:${redisPort}`;
setPublishingEnvironment(
  { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL, temporalPort, taskQueue: TASK_QUEUE, simPort },
  {
    NETWORK_TIMEOUT_MS: String(NETWORK_TIMEOUT_MS),
    // The built-in writer: the soak measures the service, not a model (no LLM simulator runs here).
    LLM_WRITER: 'builtin',
    // The receiver is in this process, on loopback: the explicit development allowance.
    WEBHOOK_ALLOW_LOOPBACK: '1',
    // Retry schedule shrunk so a delivery reaches a terminal state within the run: waits of
    // 0.3 s, 1.8 s, 9 s, 54 s (lib/webhooks/schedule.ts multipliers), then permanently failed.
    WEBHOOK_RETRY_BASE_MS: '300',
    WEBHOOK_MAX_ATTEMPTS: '5',
    WEBHOOK_TIMEOUT_MS: '3000',
    // Four processes share the machine's Postgres (with everyone else's): small pools.
    DB_POOL_MAX: process.env.DB_POOL_MAX ?? '5',
  },
);

// ── The webhook receiver: verifies signatures, records every request, fails during outages ──

interface Receipt {
  /** The receiver path the endpoint points at: `/hooks/<workspace>` or `/hooks/<workspace>/dead`. */
  endpoint: string;
  eventId: string;
  webhookId: string;
  type: string;
  postId: string | null;
  at: number;
  signatureOk: boolean;
  answered: number;
}

const receipts: Receipt[] = [];
let receiverDownUntil = 0;
const secrets = new Map<string, string>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const endpoint = (req.url ?? '').split('?')[0]!;
    const body = Buffer.concat(chunks);
    let parsed: { id?: string; type?: string; data?: { post?: { id?: string }; id?: string } } = {};
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      /* recorded with an empty id: a violation */
    }
    // The dead endpoint never recovers: its deliveries must end permanently failed, and the
    // endpoint disabled after five of them (spec 3.5, 6 rules 3 and 4).
    const answered = endpoint.endsWith('/dead') || Date.now() < receiverDownUntil ? 503 : 204;
    receipts.push({
      endpoint,
      eventId: parsed.id ?? '',
      webhookId: String(req.headers['webhook-id'] ?? ''),
      type: parsed.type ?? '',
      postId: parsed.data?.post?.id ?? null,
      at: Date.now(),
      signatureOk: verifyWebhookSignature(body, req.headers['webhook-signature'] as string | undefined, secrets.get(endpoint) ?? ''),
      answered,
    });
    res.writeHead(answered).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverPort = (receiver.address() as AddressInfo).port;

// ── API processes behind the soak's round-robin ─────────────────────────────────────────────

interface Api {
  slot: number;
  child: ChildProcess;
  port: number;
  up: boolean;
}

// What the soak started, stopped at its end; its child processes killed should it exit first.
const cleanups = new Cleanups();

// Redis: a server of the soak's own, without persistence, so a restart loses everything it held
// (rate-limit windows, MCP sessions, key-cache invalidations): the harshest Redis failure.
let redisProcess: ChildProcess | null = null;
async function startRedis(): Promise<void> {
  const child = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  cleanups.children.add(child);
  redisProcess = child;
  const deadline = Date.now() + 10_000;
  while (!(await portAcceptsConnections(redisPort))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} (port ${redisPort})`);
    if (Date.now() > deadline) throw new Error(`redis-server not listening on ${redisPort} after 10 s`);
    await sleep(50);
  }
}

async function startApi(slot: number): Promise<Api> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'api', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cleanups.children.add(child);
  const tail: string[] = [];
  child.stderr!.on('data', (d: Buffer) => {
    tail.push(d.toString());
    if (tail.length > 20) tail.shift();
  });
  const deadline = Date.now() + 90_000;
  while (!(await portAcceptsConnections(port))) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`API exited before listening:\n${tail.join('')}`);
    if (Date.now() > deadline) throw new Error(`API not listening on ${port} after 90 s:\n${tail.join('')}`);
    await sleep(200);
  }
  const api: Api = { slot, child, port, up: true };
  child.once('exit', () => (api.up = false));
  return api;
}

/** As a supervisor would: an API that fails to start (Postgres out of connections, say) is started again. */
async function startApiSupervised(slot: number): Promise<Api> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startApi(slot);
    } catch (err) {
      if (attempt >= 30) throw err;
      stats.apiStartFailures++;
      console.log(`API #${slot} failed to start (attempt ${attempt}): ${String(err).split('\n').slice(0, 2).join(' ')}; again in 2 s`);
      await sleep(2_000);
    }
  }
}

const apis: Api[] = [];
let rr = 0;
interface Answer {
  status: number;
  body: any;
}
/**
 * One request through the round-robin. A refused or reset connection (a killed API) is retried
 * on the next process with the same Idempotency-Key, so a write whose answer was lost is
 * replayed rather than repeated (spec 8); the caller sees only definite answers, or null when
 * none came within the time allowed.
 */
async function call(method: string, urlPath: string, apiKey: string, body?: unknown, giveUpMs = 60_000): Promise<Answer | null> {
  const key = `soak_${randomUUID().replace(/-/g, '')}`.slice(0, 64);
  const until = Date.now() + giveUpMs;
  while (Date.now() < until) {
    const api = apis[rr++ % apis.length]!;
    if (!api.up) {
      await sleep(50);
      continue;
    }
    try {
      const res = await fetch(`http://127.0.0.1:${api.port}${urlPath}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': key }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      // 409 "still being processed" under one key: the first attempt is still running somewhere.
      if (res.status >= 500 || (res.status === 409 && /still being processed/.test(text))) {
        await sleep(300);
        continue;
      }
      return { status: res.status, body: text ? JSON.parse(text) : null };
    } catch {
      stats.apiRetries++;
      await sleep(100);
    }
  }
  return null;
}

// ── Plan ────────────────────────────────────────────────────────────────────────────────────

interface PlannedPost {
  i: number;
  workspace: number;
  projectId: string;
  id: string | null;
  due: number;
  op: 'none' | 'reschedule' | 'unschedule';
  opAt: number;
  newDue: number;
  /** What a definite answer made true: the schedule the post must have been published at, or unscheduled. */
  expect: 'published' | 'unscheduled' | 'ambiguous';
  finalDue: number;
  opOutcome: string;
}

const stats = {
  apiRetries: 0,
  apiStartFailures: 0,
  generations: { accepted: 0, refused: {} as Record<string, number>, noAnswer: 0 },
  apiRestarts: 0,
  workerRestarts: 0,
  workerSelfExits: 0,
  faults: {} as Record<string, number>,
  reschedules: { ok: 0, refused: 0, noAnswer: 0 },
  unschedules: { ok: 0, refused: 0, noAnswer: 0 },
};
const countFault = (kind: string) => (stats.faults[kind] = (stats.faults[kind] ?? 0) + 1);

const violations: string[] = [];
const violate = (s: string) => {
  violations.push(s);
};

async function main(): Promise<number> {
  try {
    const soak = await setUp();
    const plan = await run(soak);
    return await report(soak, plan);
  } finally {
    await cleanups.run();
    receiver.close();
    const { closeRedis } = await import('../lib/redis');
    await closeRedis().catch(() => undefined);
  }
}

// ── Set up: the stores, Temporal, the simulator, the customers, the worker and the APIs ──────

type Soak = Awaited<ReturnType<typeof setUp>>;

async function setUp() {
  console.log(
    `soak — seed ${SEED}; ${POSTS} posts over ${DURATION_MS / 1000} s, ${ACCOUNTS} accounts in ${WORKSPACES} workspaces; ` +
      `reschedule ${RESCHEDULE_SHARE}, unschedule ${UNSCHEDULE_SHARE}; a fault every ~${FAULT_EVERY_MS / 1000} s`,
  );

  await recreateDatabase(DATABASE_URL);
  await startRedis();
  cleanups.push(async () => {
    redisProcess?.kill('SIGKILL');
  });
  log(`database ${new URL(DATABASE_URL).pathname.slice(1)} recreated, Redis of its own on ${REDIS_URL}`);

  // The dev server (file-backed, so a SIGKILLed one restarts with its workflows, timers and
  // histories) or the cluster tier, whose services are killed and restarted one at a time.
  const dev: { server: DevServer | null } = { server: null };
  let cluster: TemporalCluster | null = null;
  let startTemporal: () => Promise<DevServer> = () => Promise.reject(new Error('no dev server in cluster mode'));
  if (CLUSTER) {
    cluster = await startTemporalCluster({
      databaseUrl: DATABASE_URL,
      databaseName: 'bench_soak_temporal',
      fresh: true,
      ports: clusterPorts!,
      log: () => {},
    });
    const c = cluster;
    cleanups.push(async () => {
      await c.stop();
      await dropClusterDatabases(c.db);
    });
  } else {
    const binary = await resolveTemporalBinary();
    const temporalDb = path.join(os.tmpdir(), `content-scheduler-soak-${process.pid}.db`);
    fs.rmSync(temporalDb, { force: true });
    startTemporal = () => startTemporalDevServer({ binary, port: temporalPort, uiPort: null, dbFile: temporalDb, log: () => {} });
    dev.server = await startTemporal();
    cleanups.push(async () => {
      await dev.server?.stop();
      fs.rmSync(temporalDb, { force: true });
    });
  }
  const temporalAddress = `127.0.0.1:${temporalPort}`;
  const { startNetworkSimulator } = await import('../sim/network/server');
  const simulator = await startNetworkSimulator({ port: simPort });
  cleanups.push(() => simulator.close());
  const sim = simulator.control;
  log(
    `${CLUSTER ? 'Temporal cluster (frontend, history, matching, worker processes on Postgres)' : 'Temporal dev server (file-backed)'} ${temporalAddress}, network simulator ${simulator.url}, receiver :${receiverPort}`,
  );

  // Seed: workspaces, connected accounts, a write key each, one endpoint per workspace.
  const { createWorkspace, issueApiKey } = await import('../ops/provision');
  const { connectedPersonalProject } = await import('../sim/network/accounts');
  const { webhookEndpoint } = await import('./harness/seed');
  const { EVENT_TYPES } = await import('../lib/outbox');
  const { db, closeDb } = await import('../lib/db');
  cleanups.push(() => closeDb());
  const workspaces: Array<{ id: string; apiKey: string; projects: string[] }> = [];
  const endpointPath = new Map<string, string>();
  for (let w = 0; w < WORKSPACES; w++) {
    const ws = await createWorkspace({ name: `Soak ${w}`, plan: 'BUSINESS' });
    const key = await issueApiKey({ workspaceId: ws.id, scopes: ['write'], name: 'soak' });
    const postEvents = EVENT_TYPES.filter((e: string) => e.startsWith('post.'));
    // Workspace 0 also has an endpoint whose receiver never answers 2xx.
    for (const hookPath of w === 0 ? [`/hooks/${w}`, `/hooks/${w}/dead`] : [`/hooks/${w}`]) {
      const ep = await webhookEndpoint(ws.id, `http://127.0.0.1:${receiverPort}${hookPath}`, postEvents);
      secrets.set(hookPath, ep.secret);
      endpointPath.set(ep.id, hookPath);
    }
    workspaces.push({ id: ws.id, apiKey: key.key, projects: [] });
  }
  for (let a = 0; a < ACCOUNTS; a++) {
    const w = a % WORKSPACES;
    const { project } = await connectedPersonalProject(sim, workspaces[w]!.id, {
      personId: `soak${a}`,
      name: `Soak Person ${a}`,
      vanityName: `soak-person-${a}`,
    });
    workspaces[w]!.projects.push(project.id);
  }
  log(
    `seeded ${WORKSPACES} workspaces, ${ACCOUNTS} connected accounts, ${WORKSPACES + 1} webhook endpoints (every post.* event; one of them dead)`,
  );

  // Processes: the worker and two APIs.
  const workers: WorkerRun[] = [];
  const restarts: Promise<unknown>[] = [];
  const { Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: temporalAddress });
  cleanups.push(() => connection.close());
  // The soak is the worker's supervisor: a worker it did not kill that exits (it cannot reach
  // Temporal, say) is restarted as systemd or Kubernetes would, and counted.
  const killedByUs = new Set<number>();
  let stopping = false;
  const launchWorker = async (): Promise<WorkerRun> => {
    for (;;) {
      const w = startWorker(workers.length + 1, process.env, { logDir: RESULTS_DIR });
      workers.push(w);
      cleanups.children.add(w.child);
      w.child.once('exit', (code, signal) => {
        if (stopping || killedByUs.has(w.pid)) return;
        stats.workerSelfExits++;
        log(`worker pid ${w.pid} exited on its own (${signal ?? code}); restarting it`);
        restarts.push(sleep(1_000).then(launchWorker));
      });
      try {
        await w.waitReady(connection, TASK_QUEUE, 240_000);
        return w;
      } catch (err) {
        if (w.exit) return w; // its exit handler restarts it
        throw err;
      }
    }
  };
  cleanups.push(async () => {
    stopping = true;
    for (const w of workers) if (!w.exit) await w.kill('SIGTERM');
  });
  for (let i = 0; i < WORKER_COUNT; i++) await launchWorker();
  for (let i = 0; i < API_COUNT; i++) apis.push(await startApiSupervised(i));
  cleanups.push(async () => {
    for (const a of apis) if (a.up) a.child.kill('SIGTERM');
  });
  log(`worker pids ${workers.map((w) => w.pid).join(', ')}, APIs on ${apis.map((a) => `:${a.port}`).join(', ')}`);
  return { dev, cluster, startTemporal, sim, db, workspaces, endpointPath, workers, restarts, killedByUs, launchWorker };
}

// ── Run: the posts created, then changed, generated and faulted, until everything settles ────

type Plan = ReturnType<typeof planRun>;

async function run(b: Soak): Promise<Plan> {
  const p = planRun(b);
  await createPlanned(b, p);
  await Promise.all([changePosts(b, p), requestGenerations(b, p), injectFaults(b, p)]);
  await settle(b, p);
  return p;
}

/** The plan, all from the seed: every post, its change if any, and the faults, each at its time. */
function planRun(b: Soak) {
  const { workspaces } = b;
  // The plan, all from the seed.
  // Creation runs first, in order of due time, so it only has to stay ahead of the due times:
  // 20 s plus 60 ms a post of lead (a 2-core machine shared with other work creates 3 to 30
  // posts a second; the due times come at POSTS / duration a second).
  const start = Date.now() + 20_000 + POSTS * 60;
  const plan: PlannedPost[] = [];
  for (let i = 0; i < POSTS; i++) {
    const workspace = Math.floor(rand() * WORKSPACES);
    const due = Math.round(start + 10_000 + rand() * (DURATION_MS - 10_000));
    const r = rand();
    const op: PlannedPost['op'] = r < UNSCHEDULE_SHARE ? 'unschedule' : r < UNSCHEDULE_SHARE + RESCHEDULE_SHARE ? 'reschedule' : 'none';
    // Changes land well before the old due time so the expected outcome is definite.
    const opAt = Math.round(between(start, Math.max(start, due - 8_000)));
    const newDue = Math.round(due + between(5_000, 40_000));
    plan.push({
      i,
      workspace,
      projectId: pick(workspaces[workspace]!.projects),
      id: null,
      due,
      op,
      opAt,
      newDue,
      expect: op === 'unschedule' ? 'unscheduled' : 'published',
      finalDue: op === 'reschedule' ? newDue : due,
      opOutcome: '',
    });
  }
  const faultTimes: Array<{ at: number; kind: string; arg: number }> = [];
  const allKinds = [
    'worker_kill',
    'api_kill',
    'net_transient',
    'net_lost_response',
    'net_timeout',
    'receiver_outage',
    'temporal_kill',
    'redis_restart',
    ...(CLUSTER ? ['history_kill', 'matching_kill', 'frontend_kill', 'temporal_db_drop'] : []),
  ];
  const kinds = opt.faults === 'all' ? allKinds : opt.faults!.split(',');
  const unknownKinds = kinds.filter((k) => !allKinds.includes(k));
  if (unknownKinds.length) throw new Error(`unknown fault kind(s): ${unknownKinds.join(', ')}`);
  // Every kind once, in a seeded order, before kinds are drawn at random: a short run still
  // meets each fault (when it has room for as many faults as there are kinds).
  const firstRound = [...kinds];
  for (let i = firstRound.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [firstRound[i], firstRound[j]] = [firstRound[j]!, firstRound[i]!];
  }
  for (let at = start + between(3_000, FAULT_EVERY_MS); at < start + DURATION_MS; at += between(0.5, 1.5) * FAULT_EVERY_MS)
    faultTimes.push({ at, kind: firstRound[faultTimes.length] ?? pick(kinds), arg: rand() });
  return { start, plan, faultTimes };
}

async function createPlanned(b: Soak, p: Plan) {
  const { workspaces } = b;
  const { start, plan } = p;
  // Creation, before the faults start (a create that failed would be a setup error, not a finding).
  const { default: pLimit } = await import('p-limit');
  await pLimit(8).map(
    [...plan].sort((x, y) => x.due - y.due),
    async (p) => {
      const a = await call('POST', '/v1/posts', workspaces[p.workspace]!.apiKey, {
        projectId: p.projectId,
        content: `Soak post ${p.i} (seed ${SEED})`,
        scheduledFor: new Date(p.due).toISOString(),
      });
      if (!a || a.status !== 200) throw new Error(`create ${p.i}: ${a ? `${a.status} ${JSON.stringify(a.body)}` : 'no answer'}`);
      p.id = a.body.data.id;
    },
  );
  log(
    `created ${POSTS} scheduled posts (due ${new Date(start + 10_000).toISOString().slice(11, 19)}…${new Date(start + DURATION_MS).toISOString().slice(11, 19)} UTC)`,
  );
  if (Date.now() > start) log(`NOTE: creation overran the plan's start by ${((Date.now() - start) / 1000).toFixed(1)} s`);
}

/** Reschedules and unschedules at their planned times. */
async function changePosts(b: Soak, p: Plan) {
  const { workspaces } = b;
  const { plan } = p;
  await Promise.all(
    plan
      .filter((p) => p.op !== 'none')
      .map(async (p) => {
        await sleep(Math.max(0, p.opAt - Date.now()));
        // Too late to be definite (creation overran): leave the post as it is.
        if (Date.now() > p.due - 5_000) {
          p.op = 'none';
          p.finalDue = p.due;
          p.expect = 'published';
          return;
        }
        const scheduledFor = p.op === 'reschedule' ? new Date(p.newDue).toISOString() : null;
        const a = await call(
          'PATCH',
          `/v1/posts/${p.id}`,
          workspaces[p.workspace]!.apiKey,
          { scheduledFor },
          Math.max(1_000, p.due - 3_000 - Date.now()),
        );
        const bucket = p.op === 'reschedule' ? stats.reschedules : stats.unschedules;
        if (!a) {
          bucket.noAnswer++;
          p.expect = 'ambiguous';
          p.opOutcome = 'no answer';
        } else if (a.status === 200) {
          bucket.ok++;
          p.opOutcome = 'ok';
        } else {
          // A definite refusal (409 connection check, …) leaves the post unchanged (spec 3.1).
          bucket.refused++;
          p.opOutcome = `${a.status} ${a.body?.error?.code ?? ''}`;
          p.expect = 'published';
          p.finalDue = p.due;
        }
      }),
  );
}

/** What each generation request (by its number) was answered; its job's source text names the number. */
const generationOutcomes: Array<'accepted' | 'refused' | 'no answer'> = [];
const generationText = (g: number) => `Soak generation ${g} (seed ${SEED}): what a week of scheduled posts taught us about retries.`;

/** Generation jobs at random moments of the run, in random workspaces (built-in writer). */
async function requestGenerations(b: Soak, p: Plan) {
  const { workspaces } = b;
  const { start } = p;
  await Promise.all(
    Array.from({ length: GENERATIONS }, async (_, g) => {
      const w = Math.floor(rand() * WORKSPACES);
      const projectId = pick(workspaces[w]!.projects);
      await sleep(Math.max(0, start + rand() * DURATION_MS - Date.now()));
      const a = await call('POST', '/v1/posts/generations', workspaces[w]!.apiKey, {
        projectId,
        source: { type: 'text', text: generationText(g) },
      });
      generationOutcomes[g] = !a ? 'no answer' : a.status === 200 ? 'accepted' : 'refused';
      if (!a) stats.generations.noAnswer++;
      else if (a.status === 200) stats.generations.accepted++;
      else {
        const k = `${a.status} ${a.body?.error?.code ?? ''}`.trim();
        stats.generations.refused[k] = (stats.generations.refused[k] ?? 0) + 1;
      }
    }),
  );
}

/** The faults, each at its planned time; a service killed is restarted after its delay (the restarts are awaited in settle). */
async function injectFaults(b: Soak, p: Plan) {
  const { dev, cluster, startTemporal, sim, db, workers, restarts, killedByUs, launchWorker } = b;
  const { start, faultTimes } = p;
  let temporalDown = false;
  // A creation that overran the plan's start shifts the whole fault schedule, rather than
  // firing the faults it missed at once.
  const shift = Math.max(0, Date.now() - start);
  for (const f of faultTimes) {
    await sleep(Math.max(0, f.at + shift - Date.now()));
    switch (f.kind) {
      case 'worker_kill': {
        // One of the running workers; with two or more, the others keep draining meanwhile.
        const live = workers.filter((x) => !x.exit && !killedByUs.has(x.pid));
        const w = live[Math.floor(f.arg * live.length)];
        if (!w) break;
        killedByUs.add(w.pid);
        await w.kill('SIGKILL');
        countFault('worker SIGKILL');
        const delay = 1_000 + f.arg * 9_000;
        log(`SIGKILL worker pid ${w.pid}; restart in ${(delay / 1000).toFixed(1)} s`);
        restarts.push(
          sleep(delay)
            .then(launchWorker)
            .then((nw) => {
              stats.workerRestarts++;
              log(`worker restarted, pid ${nw.pid}`);
            }),
        );
        break;
      }
      case 'api_kill': {
        const up = apis.filter((a) => a.up);
        if (up.length < 2) break; // one already down: keep one serving
        const victim = up[Math.floor(f.arg * up.length)]!;
        victim.child.kill('SIGKILL');
        victim.up = false;
        countFault('API SIGKILL');
        const delay = 1_000 + f.arg * 7_000;
        log(`SIGKILL API #${victim.slot} (:${victim.port}); restart in ${(delay / 1000).toFixed(1)} s`);
        restarts.push(
          sleep(delay)
            .then(() => startApiSupervised(victim.slot))
            .then((na) => {
              apis[victim.slot] = na;
              stats.apiRestarts++;
              log(`API #${victim.slot} restarted on :${na.port}`);
            }),
        );
        break;
      }
      case 'net_transient': {
        const times = 1 + Math.floor(f.arg * 5);
        const status = pick([429, 500, 502, 503, 504] as const);
        await sim.addFault({ kind: 'transient', operation: 'createPost', times, status });
        countFault('network transient');
        log(`network: next ${times} createPost calls fail with ${status}`);
        break;
      }
      case 'net_lost_response': {
        const times = 1 + Math.floor(f.arg * 3);
        const lostAs = f.arg < 0.5 ? 'socket' : '503';
        await sim.addFault({ kind: 'lost_response', operation: 'createPost', times, lostAs });
        countFault('network lost response');
        log(`network: next ${times} createPost calls succeed and lose the answer (${lostAs})`);
        break;
      }
      case 'net_timeout': {
        const ms = 2_000 + Math.floor(f.arg * 6_000);
        await sim.setLatency({ ms: NETWORK_TIMEOUT_MS + 1_500, operation: 'createPost' });
        countFault('network timeout');
        log(
          `network: createPost answers after ${NETWORK_TIMEOUT_MS + 1_500} ms (client timeout ${NETWORK_TIMEOUT_MS} ms) for ${(ms / 1000).toFixed(1)} s`,
        );
        restarts.push(sleep(ms).then(() => sim.setLatency({ ms: 0, operation: 'createPost' })));
        break;
      }
      case 'history_kill':
      case 'matching_kill':
      case 'frontend_kill': {
        if (temporalDown || !cluster) break;
        temporalDown = true;
        const service = cluster.services[f.kind.replace('_kill', '') as 'history' | 'matching' | 'frontend'];
        const delay = 2_000 + f.arg * 8_000;
        await service.kill();
        countFault(`Temporal ${service.name} SIGKILL`);
        log(`SIGKILL Temporal ${service.name} service; restart in ${(delay / 1000).toFixed(1)} s`);
        restarts.push(
          sleep(delay)
            .then(() => service.restart())
            .then(() => {
              temporalDown = false;
              log(`Temporal ${service.name} restarted, pid ${service.process.child.pid}`);
            }),
        );
        break;
      }
      case 'temporal_db_drop': {
        if (!cluster) break;
        // Every connection of the Temporal server to its two databases, as a Postgres
        // failover or a network cut would end them; the services reconnect on their own.
        const { rows } = await db().raw(
          'SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = ANY(?) AND pid <> pg_backend_pid()',
          [[cluster.db.name, cluster.db.visibilityName]],
        );
        countFault('Temporal Postgres connections dropped');
        log(`terminated ${rows[0].n} Postgres connections of the Temporal server`);
        break;
      }
      case 'temporal_kill': {
        if (temporalDown) break;
        temporalDown = true;
        const delay = 2_000 + f.arg * 10_000;
        if (cluster) {
          // Every service at once, as a host loss would; restarted in the safe order.
          const c = cluster;
          for (const svc of Object.values(c.services)) await svc.kill();
          countFault('Temporal SIGKILL');
          log(`SIGKILL every Temporal service; restart in ${(delay / 1000).toFixed(1)} s`);
          restarts.push(
            sleep(delay)
              .then(async () => {
                for (const svc of Object.values(c.services)) await svc.restart();
              })
              .then(() => {
                temporalDown = false;
                log('Temporal services restarted');
              }),
          );
          break;
        }
        dev.server!.child.kill('SIGKILL');
        await dev.server!.exited;
        countFault('Temporal SIGKILL');
        log(`SIGKILL Temporal dev server; restart (same file) in ${(delay / 1000).toFixed(1)} s`);
        restarts.push(
          sleep(delay)
            .then(startTemporal)
            .then((t) => {
              dev.server = t;
              temporalDown = false;
              log(`Temporal dev server restarted, pid ${t.child.pid}`);
            }),
        );
        break;
      }
      case 'redis_restart': {
        if (!redisProcess || redisProcess.exitCode !== null || redisProcess.signalCode !== null) break;
        const delay = 1_000 + f.arg * 7_000;
        const dead = redisProcess;
        redisProcess = null;
        await new Promise<void>((resolve) => {
          dead.once('exit', () => resolve());
          dead.kill('SIGKILL');
        });
        countFault('Redis restart');
        log(`SIGKILL Redis (everything it held is lost); restart in ${(delay / 1000).toFixed(1)} s`);
        restarts.push(
          sleep(delay)
            .then(startRedis)
            .then(() => log('Redis restarted (empty)')),
        );
        break;
      }
      case 'receiver_outage': {
        const ms = 3_000 + f.arg * 12_000;
        receiverDownUntil = Date.now() + ms;
        countFault('webhook receiver outage');
        log(`webhook receiver answers 503 for ${(ms / 1000).toFixed(1)} s`);
        break;
      }
    }
  }
}

async function settle(b: Soak, p: Plan) {
  const { sim, db, workspaces, restarts } = b;
  const { plan } = p;
  // Restarts may queue further restarts (a worker that exits on its own): wait until none is added.
  for (let n = -1; n !== restarts.length;) {
    n = restarts.length;
    await Promise.all(restarts);
  }
  // Injected network faults are left in place: one injected just now still fires on the next calls.
  await sim.setLatency({ ms: 0, operation: 'createPost' });
  log(`faults over: ${JSON.stringify(stats.faults)}; waiting for publishing and webhooks to settle`);

  // Drain: every expected post published, every delivery terminal, every job terminal; or
  // --drain seconds without progress (a backlog that still moves is waited for).
  const lastDue = Math.max(...plan.map((p) => p.finalDue));
  let drainUntil = Math.max(lastDue, Date.now()) + DRAIN_MS;
  let progress = '';
  const expectedIds = plan.filter((p) => p.expect === 'published').map((p) => p.id!);
  for (;;) {
    const [{ n: published }] = (await db()('posts').whereIn('id', expectedIds).where({ status: 'published' }).count({ n: '*' })) as Array<{
      n: string;
    }>;
    const [{ n: open }] = (await db()('webhook_deliveries').whereNotIn('status', ['delivered', 'failed']).count({ n: '*' })) as Array<{
      n: string;
    }>;
    const [{ n: running }] = (await db()('jobs')
      .whereIn(
        'workspace_id',
        workspaces.map((w) => w.id),
      )
      .whereNotIn('status', ['DONE', 'FAILED', 'CANCELLED'])
      .count({ n: '*' })) as Array<{ n: string }>;
    const [{ n: fannedOut }] = (await db()('webhook_deliveries').count({ n: '*' })) as Array<{ n: string }>;
    const now = `${published}/${open}/${running}/${fannedOut}`;
    if (now !== progress) {
      progress = now;
      drainUntil = Math.max(drainUntil, Date.now() + DRAIN_MS);
    }
    if (
      (Number(published) === expectedIds.length && Number(open) === 0 && Number(running) === 0 && Date.now() > lastDue + 5_000) ||
      Date.now() > drainUntil
    )
      break;
    await sleep(2_000);
  }
  await sleep(3_000); // a late duplicate shows up now, not after the checks
}

// ── Report: everything checked against the simulator's and the receiver's own records ───────

type Checks = Awaited<ReturnType<typeof checkPosts>> &
  Awaited<ReturnType<typeof checkWebhooks>> &
  Awaited<ReturnType<typeof checkJobs>> &
  Awaited<ReturnType<typeof checkEffects>>;

async function report(b: Soak, p: Plan): Promise<number> {
  const posts = await checkPosts(b, p);
  const webhooks = await checkWebhooks(b);
  const jobs = await checkJobs(b, webhooks.wsIds);
  const effects = await checkEffects(b, p, webhooks.wsIds);
  return printReport(b, p, { ...posts, ...webhooks, ...jobs, ...effects });
}

/** Every planned post against the network: published once at its final due time, or not at all when unscheduled; its row truthful. */
async function checkPosts(b: Soak, p: Plan) {
  const { sim, db } = b;
  const { plan } = p;
  // ── Checks ────────────────────────────────────────────────────────────────────────────
  const onNetwork = (await sim.listPosts({ limit: 1_000_000 })).posts;
  const perRef = new Map<string, typeof onNetwork>();
  for (const p of onNetwork) {
    if (!p.reference) continue;
    perRef.set(p.reference, [...(perRef.get(p.reference) ?? []), p]);
  }
  const rows = await db()('posts')
    .whereIn(
      'id',
      plan.map((p) => p.id!),
    )
    .select('id', 'status', 'scheduled_at', 'published_at', 'delivery');
  const rowOf = new Map(rows.map((r: any) => [r.id, r]));
  // Posts by what went wrong (a post may count in several), and those whose change had no answer.
  const posts = { lost: 0, duplicated: 0, publishedUnscheduled: 0, early: 0, untruthful: 0, ambiguous: 0 };
  const lags: number[] = [];
  for (const p of plan) {
    const net = perRef.get(p.id!) ?? [];
    const row: any = rowOf.get(p.id!);
    const delivery = typeof row.delivery === 'string' ? JSON.parse(row.delivery) : row.delivery;
    if (net.length > 1) {
      posts.duplicated++;
      violate(`post ${p.id} (#${p.i}) on the network ${net.length} times`);
    }
    if (p.expect === 'ambiguous') {
      // The change had no definite answer: either outcome is allowed, but the state must match the network.
      posts.ambiguous++;
      const pub = net.length > 0;
      if (pub !== (row.status === 'published')) {
        posts.untruthful++;
        violate(`post ${p.id} (#${p.i}, ${p.op} without answer): status ${row.status} but ${net.length} network posts`);
      }
      continue;
    }
    if (p.expect === 'unscheduled') {
      if (net.length) {
        posts.publishedUnscheduled++;
        violate(`post ${p.id} (#${p.i}) unscheduled at ${new Date(p.opAt).toISOString()} but published ${net[0]!.receivedAt}`);
      }
      if (row.status !== 'draft' || row.scheduled_at !== null || delivery?.state !== 'not_scheduled') {
        posts.untruthful++;
        violate(
          `post ${p.id} (#${p.i}) unscheduled: status ${row.status}, scheduledAt ${row.scheduled_at}, delivery ${JSON.stringify(delivery)}`,
        );
      }
      continue;
    }
    if (!net.length) {
      posts.lost++;
      violate(
        `post ${p.id} (#${p.i}) due ${new Date(p.finalDue).toISOString()} never reached the network (status ${row.status}, delivery ${JSON.stringify(delivery)})`,
      );
      continue;
    }
    const receivedAt = Date.parse(net[0]!.receivedAt);
    lags.push(receivedAt - p.finalDue);
    // Published at its (final) due time, not before: a reschedule must move the publish.
    if (receivedAt < p.finalDue - 1_000) {
      posts.early++;
      violate(
        `post ${p.id} (#${p.i}) published ${net[0]!.receivedAt}, before its due time ${new Date(p.finalDue).toISOString()} (${p.op})`,
      );
    }
    if (row.status !== 'published' || !row.published_at || delivery?.state !== 'published') {
      posts.untruthful++;
      violate(
        `post ${p.id} (#${p.i}) on the network but status ${row.status}, publishedAt ${row.published_at}, delivery ${JSON.stringify(delivery)}`,
      );
    }
  }
  const planned = new Set(plan.map((p) => p.id!));
  const stray = onNetwork.filter((p) => !p.reference || !planned.has(p.reference)).length;
  if (stray) violate(`${stray} network posts that are no planned post`);
  return { posts, lags };
}

async function checkWebhooks(b: Soak) {
  const { db, workspaces, endpointPath } = b;
  // Webhooks: every post event of the soak's workspaces has one delivery per endpoint, each
  // terminal; delivered ones reached the receiver with a 2xx; duplicates carry one Webhook-Id.
  const wsIds = workspaces.map((w) => w.id);
  const events = await db()('outbox_events')
    .whereIn('workspace_id', wsIds)
    .where('type', 'like', 'post.%')
    .select('id', 'type', 'workspace_id');
  const deliveries = (await db()('webhook_deliveries')
    .whereIn('workspace_id', wsIds)
    .select('event_id', 'endpoint_id', 'status', 'attempt_count', 'failure_reason')) as Array<{
    event_id: string;
    endpoint_id: string;
    status: string;
    attempt_count: number;
    failure_reason: string | null;
  }>;
  const endpointsOf = new Map<string, string[]>();
  for (const e of (await db()('webhook_endpoints').whereIn('workspace_id', wsIds).select('id', 'workspace_id')) as Array<{
    id: string;
    workspace_id: string;
  }>)
    endpointsOf.set(e.workspace_id, [...(endpointsOf.get(e.workspace_id) ?? []), e.id]);
  const deliveryOf = new Map(deliveries.map((d) => [`${d.event_id}/${d.endpoint_id}`, d]));
  const byPair = new Map<string, Receipt[]>();
  for (const r of receipts) byPair.set(`${r.eventId}${r.endpoint}`, [...(byPair.get(`${r.eventId}${r.endpoint}`) ?? []), r]);
  const eventIds = new Set(events.map((e: any) => e.id));
  // Deliveries by outcome, each (event, endpoint) pair counted once; failures by reason.
  const wh = {
    pairs: 0,
    delivered: 0,
    failed: 0,
    deadFailed: 0,
    failureReasons: {} as Record<string, number>,
    open: 0,
    droppedSilently: 0,
    duplicated: 0,
    badSignature: 0,
  };
  for (const e of events as Array<{ id: string; type: string; workspace_id: string }>) {
    for (const endpointId of endpointsOf.get(e.workspace_id) ?? []) {
      wh.pairs++;
      const hookPath = endpointPath.get(endpointId)!;
      const d = deliveryOf.get(`${e.id}/${endpointId}`);
      const got = byPair.get(`${e.id}${hookPath}`) ?? [];
      const ok = got.filter((r) => r.answered < 300);
      if (!d) {
        wh.droppedSilently++;
        violate(`event ${e.id} (${e.type}) has no delivery record for ${hookPath}`);
        continue;
      }
      if (d.status === 'delivered') {
        wh.delivered++;
        if (!ok.length) {
          wh.droppedSilently++;
          violate(`event ${e.id} recorded delivered to ${hookPath} but the receiver never answered it 2xx (${got.length} requests)`);
        }
      } else if (d.status === 'failed') {
        wh.failed++;
        if (hookPath.endsWith('/dead')) wh.deadFailed++;
        const reason = (d.failure_reason ?? 'none').split(/[:(]/)[0]!.trim().slice(0, 40);
        wh.failureReasons[reason] = (wh.failureReasons[reason] ?? 0) + 1;
        if (ok.length) violate(`event ${e.id} recorded permanently failed for ${hookPath} but the receiver answered it 2xx`);
      } else {
        wh.open++;
        violate(`event ${e.id} (${e.type}) delivery to ${hookPath} still ${d.status} after the drain (${d.attempt_count} attempts)`);
      }
      if (ok.length > 1) wh.duplicated++;
      if (new Set(got.map((r) => r.webhookId)).size > 1 || got.some((r) => r.webhookId !== e.id))
        violate(`event ${e.id}: Webhook-Id varies or differs across its ${got.length} requests to ${hookPath}`);
      wh.badSignature += got.filter((r) => !r.signatureOk).length;
    }
  }
  const deadEndpoint = (await db()('webhook_endpoints')
    .whereIn('workspace_id', wsIds)
    .where('url', 'like', '%/dead')
    .first('is_active', 'disabled_reason')) as { is_active: boolean; disabled_reason: string | null } | undefined;
  if (deadEndpoint && (deadEndpoint.is_active || !deadEndpoint.disabled_reason?.startsWith('repeated_failures')))
    violate(
      `the dead endpoint is not disabled with repeated_failures (isActive ${deadEndpoint?.is_active}, reason ${deadEndpoint?.disabled_reason})`,
    );
  if (wh.badSignature) violate(`${wh.badSignature} webhook requests with a signature that does not verify`);
  const unknownEvents = receipts.filter((r) => !eventIds.has(r.eventId)).length;
  if (unknownEvents) violate(`${unknownEvents} webhook requests for events not in the outbox`);
  return { wsIds, events, wh, deadEndpoint };
}

/**
 * spec 8, one request one effect: every idempotent write the soak sent maps to exactly one row,
 * found by the text the request carried (a create's content, a generation's source text),
 * whatever was killed while it ran. A second row is a duplicated effect; an accepted request
 * without its row is a lost one. A request that never got an answer may have made one row.
 */
async function checkEffects(b: Soak, p: Plan, wsIds: string[]) {
  const { db } = b;
  const effects = { posts: { once: 0, duplicated: 0, lost: 0 }, generations: { once: 0, duplicated: 0, lost: 0, none: 0 } };
  const postRows = (await db()('posts')
    .whereIn('workspace_id', wsIds)
    .where('content', 'like', 'Soak post %')
    .groupBy('content')
    .select('content', db().raw('count(*)::int as n'))) as Array<{ content: string; n: number }>;
  const postsByContent = new Map(postRows.map((r) => [r.content, r.n]));
  for (const planned of p.plan) {
    const n = postsByContent.get(`Soak post ${planned.i} (seed ${SEED})`) ?? 0;
    if (n === 1) effects.posts.once++;
    else if (n > 1) {
      effects.posts.duplicated++;
      violate(`create request of post #${planned.i} made ${n} posts`);
    } else {
      effects.posts.lost++;
      violate(`create request of post #${planned.i} was answered 200 but made no post`);
    }
  }
  const jobRows = (await db()('jobs')
    .whereIn('workspace_id', wsIds)
    .where({ type: 'POST_GENERATION' })
    .groupByRaw("input->>'sourceText'")
    .select(db().raw("input->>'sourceText' as text"), db().raw('count(*)::int as n'))) as Array<{ text: string; n: number }>;
  const jobsByText = new Map(jobRows.map((r) => [r.text, r.n]));
  generationOutcomes.forEach((outcome, g) => {
    const n = jobsByText.get(generationText(g)) ?? 0;
    if (n > 1) {
      effects.generations.duplicated++;
      violate(`generation request ${g} (${outcome}) made ${n} jobs`);
    } else if (n === 1) {
      effects.generations.once++;
      if (outcome === 'refused') violate(`generation request ${g} was refused but made a job`);
    } else if (outcome === 'accepted') {
      effects.generations.lost++;
      violate(`generation request ${g} was accepted but made no job`);
    } else effects.generations.none++;
  });
  return { effects };
}

async function checkJobs(b: Soak, wsIds: string[]) {
  const { db } = b;
  // Generation jobs: every job of the soak's workspaces terminal.
  const jobRows = (await db()('jobs').whereIn('workspace_id', wsIds).select('id', 'type', 'status', 'error_code')) as Array<{
    id: string;
    type: string;
    status: string;
    error_code: string | null;
  }>;
  const jobsByStatus: Record<string, number> = {};
  for (const j of jobRows) {
    jobsByStatus[j.status] = (jobsByStatus[j.status] ?? 0) + 1;
    if (!['DONE', 'FAILED', 'CANCELLED'].includes(j.status)) violate(`job ${j.id} (${j.type}) still ${j.status} after the drain`);
  }
  return { jobsByStatus };
}

async function printReport(b: Soak, p: Plan, c: Checks): Promise<number> {
  const { sim } = b;
  const { plan } = p;
  const { lags, events, deadEndpoint, jobsByStatus, wh, posts, effects } = c;
  const sorted = lags.sort((a, b) => a - b);
  const q = (x: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(x * sorted.length) - 1)]! / 1000 : NaN);
  const counts = await sim.counts();
  const L = (label: string, value: string) => console.log(`  ${label.padEnd(52)}${value}`);
  console.log(`\nsoak result — seed ${SEED}, ${((Date.now() - t0) / 1000).toFixed(0)} s wall`);
  L(
    'posts',
    `${POSTS} created; ${plan.filter((p) => p.expect === 'published').length} expected published, ${plan.filter((p) => p.expect === 'unscheduled').length} unscheduled, ${posts.ambiguous} ambiguous`,
  );
  L('reschedules', JSON.stringify(stats.reschedules));
  L('unschedules', JSON.stringify(stats.unschedules));
  L('faults injected', JSON.stringify(stats.faults));
  L(
    'restarts',
    `worker ${stats.workerRestarts} after a kill + ${stats.workerSelfExits} after exiting on its own; API ${stats.apiRestarts} (${stats.apiStartFailures} failed starts retried); ${stats.apiRetries} client retries on a dead API`,
  );
  L(
    'generation jobs',
    `${GENERATIONS} requested: ${stats.generations.accepted} accepted, refused ${JSON.stringify(stats.generations.refused)}, ${stats.generations.noAnswer} without answer; rows by status ${JSON.stringify(jobsByStatus)}`,
  );
  L(
    'effects per idempotent request',
    `post creates: ${effects.posts.once} exactly once, ${effects.posts.duplicated} duplicated, ${effects.posts.lost} lost; generations: ${effects.generations.once} exactly once, ${effects.generations.duplicated} duplicated, ${effects.generations.lost} lost, ${effects.generations.none} refused or unanswered without a job`,
  );
  L('lost', String(posts.lost));
  L('duplicated', String(posts.duplicated));
  L('published although unscheduled', String(posts.publishedUnscheduled));
  L('published before the due time', String(posts.early));
  L('state or delivery block untruthful', String(posts.untruthful));
  L('publish lag (network) p50 / p99 / max', `${q(0.5).toFixed(1)} s / ${q(0.99).toFixed(1)} s / ${q(1).toFixed(1)} s`);
  L(
    'network createPost calls / replays / lost answers',
    `${counts.calls.createPost} / ${counts.replays} / ${counts.lostResponses} (${counts.faultsTriggered} calls hit by an injected fault)`,
  );
  L(
    'webhook events (post.*)',
    `${events.length} events × their workspace's endpoints = ${wh.pairs} deliveries: ${wh.delivered} delivered, ${wh.failed} permanently failed (${wh.deadFailed} of them to the dead endpoint; reasons ${JSON.stringify(wh.failureReasons)}), ${wh.open} not terminal, ${wh.droppedSilently} silently dropped`,
  );
  L(
    'dead endpoint',
    deadEndpoint ? `isActive ${deadEndpoint.is_active}, disabledReason ${JSON.stringify(deadEndpoint.disabled_reason)}` : 'none',
  );
  L(
    'webhook requests',
    `${receipts.length} (${receipts.filter((r) => r.answered >= 300).length} answered 503: outages and the dead endpoint), ${wh.duplicated} events delivered 2xx more than once (same Webhook-Id)`,
  );
  console.log(
    `\n${violations.length ? `FAIL: ${violations.length} violation(s)` : 'PASS: no violation'} — seed ${SEED} (replay: npm run bench -- soak --seed ${SEED}${process.argv
      .slice(2)
      .filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed')
      .map((a) => ` ${a}`)
      .join('')})`,
  );
  for (const v of violations.slice(0, 40)) console.log(`  - ${v}`);
  if (violations.length > 40) console.log(`  … ${violations.length - 40} more`);
  return violations.length ? 1 : 0;
}

main()
  .then((code) => process.exit(code))
  .catch((err) => {
    console.error(`soak (seed ${SEED}): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
