// The rolling-deploy check (docs/operations.md "Deploying workflow changes", step 5): posts sleep
// on their publish timers while the workers are restarted one at a time onto a build whose
// publish workflow changed behind patched(); every post must still be published once, on time,
// and every history must replay on the new build.
//
//   npm run rolling-deploy -- [--posts 24] [--workers 2] [--lead 20] [--spread 60] [--pause 10] [--max-lag 30]
//   npm run rolling-deploy -- --address host:7233 --namespace scratch     # a running cluster
//
// The new build is made here: a temporary copy of workflows/ with the change below applied,
// bundled and handed to the restarted workers through WORKFLOW_BUNDLE_PATH (tooling/workflowVariant.ts);
// nothing of it is shipped. Against --address, use a namespace of its own: the workers start the
// deployment's singleton workflows (reconciler, relays) on this run's task queue.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from './ports';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch, type Launched, type LaunchOptions } from './launcher';
import type { WorkflowEdit } from './workflowVariant';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The change the new build makes: the publish step re-reads the post row first, for runs that reach it on the new build. */
export const ROLLING_PATCH = 'rolling-deploy-check-reread';
export const ROLLING_CHANGE: WorkflowEdit = {
  file: 'publishPost.ts',
  find: "    status.state = 'publishing';\n",
  replace: `    if (patched('${ROLLING_PATCH}')) await loadSchedule(input.postId);\n    status.state = 'publishing';\n`,
};

const { values: opt } = parseArgs({
  options: {
    posts: { type: 'string', default: '24' },
    workers: { type: 'string', default: '2' },
    lead: { type: 'string', default: '20' },
    spread: { type: 'string', default: '60' },
    pause: { type: 'string', default: '10' },
    'max-lag': { type: 'string', default: '30' },
    address: { type: 'string' },
    namespace: { type: 'string' },
  },
});
function num(name: keyof typeof opt, min: number): number {
  const n = Number(opt[name]);
  if (!Number.isFinite(n) || n < min) {
    console.error(`--${name} must be a number ≥ ${min}`);
    process.exit(2);
  }
  return n;
}
const POSTS = num('posts', 1);
const WORKERS = num('workers', 1);
const LEAD_MS = num('lead', 5) * 1000;
const SPREAD_MS = num('spread', 0) * 1000;
const PAUSE_MS = num('pause', 0) * 1000;
const MAX_LAG_MS = num('max-lag', 1) * 1000;
if (opt.address && !opt.namespace) {
  console.error('--address needs --namespace: run the check in a namespace of its own');
  process.exit(2);
}

const step = (text: string) => console.log(`• ${text}`);

// lib/config reads the environment once, at import: every address is settled before the first
// project module is loaded, and the children inherit the same environment.
const ownTemporal = !opt.address;
const temporalPort = ownTemporal ? await freePort() : 0;
const simPort = await freePort();
const apiPort = await freePort();
const database = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler');
database.pathname = `/content_scheduler_rolling_${process.pid}`;
Object.assign(process.env, {
  DATABASE_URL: database.toString(),
  TEMPORAL_ADDRESS: opt.address ?? `127.0.0.1:${temporalPort}`,
  TEMPORAL_NAMESPACE: opt.namespace ?? 'default',
  TEMPORAL_TASK_QUEUE: `rolling-deploy-${process.pid}`,
  NETWORK_API_URL: `http://127.0.0.1:${simPort}`,
  PUBLISH_DELAY_SECONDS: '0',
  PORT: String(apiPort),
  MCP_PORT: String(await freePort()),
  METRICS_PORT: '0',
  WORKER_METRICS_PORT: '0',
  LOG_LEVEL: 'info',
});

/** A project process (tooling/launcher.ts) whose output is kept for the report; up once `ready` holds. */
function start(name: string, options: LaunchOptions): Promise<Launched> {
  return launch({ name, ...options, keepOutput: true, readyTimeoutMs: 120_000, stopGraceMs: 30_000 });
}

async function until(what: string, timeoutMs: number, ok: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

async function startWorker(name: string, bundlePath: string): Promise<Launched> {
  const worker = await start(name, { kind: 'worker', env: { WORKFLOW_BUNDLE_PATH: bundlePath }, ready: { line: /"worker running"/ } });
  children.push(worker);
  return worker;
}

/** `bin/admin`, the operator path, for the workspace, its connected projects and the API key. */
function admin(...args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(ROOT, 'bin', 'admin'), args, { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bin/admin ${args.join(' ')}: ${err || out}`))));
  });
}

async function api(method: string, url: string, key: string, body?: unknown): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${apiPort}${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${url}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const children: Launched[] = [];
const cleanups: Array<() => Promise<unknown>> = [];

async function main(): Promise<boolean> {
  // The replay gate below runs a replay worker in this process; its state changes are INFO lines.
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const { dropDatabase, recreateDatabase } = await import('./databases');
  cleanups.push(() => dropDatabase(process.env.DATABASE_URL!));
  await recreateDatabase(process.env.DATABASE_URL!);
  const { closeDb, db } = await import('../lib/db');
  cleanups.push(closeDb);

  if (ownTemporal) {
    const { resolveTemporalBinary, startTemporalDevServer } = await import('./temporalBinary');
    const server = await startTemporalDevServer({
      binary: await resolveTemporalBinary({ log: (l) => step(l) }),
      port: temporalPort,
      uiPort: null,
      dbFile: null,
      log: () => {},
    });
    cleanups.push(() => server.stop());
  }
  step(`Temporal at ${process.env.TEMPORAL_ADDRESS} (${process.env.TEMPORAL_NAMESPACE}), task queue ${process.env.TEMPORAL_TASK_QUEUE}`);
  const { startNetworkSimulator } = await import('../sim/network/server');
  const sim = await startNetworkSimulator({ port: simPort });
  cleanups.push(() => sim.close());

  // The two builds: the current source (old) and the same with ROLLING_CHANGE (new).
  const { workflowBundle } = await import('../workers/worker');
  const { bundleWorkflowVariant } = await import('./workflowVariant');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rolling-deploy-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const oldBundle = path.join(dir, 'old.js');
  const newBundle = path.join(dir, 'new.js');
  await writeFile(oldBundle, (await workflowBundle()).code);
  await writeFile(newBundle, (await bundleWorkflowVariant([ROLLING_CHANGE])).code);
  step('bundled the current workflows and the patched build');

  // Workers first: they register the search attributes the API's starts carry.
  const workers = await Promise.all(Array.from({ length: WORKERS }, (_, i) => startWorker(`worker ${i + 1} (old build)`, oldBundle)));
  children.push(await start('API', { kind: 'api', env: { LOG_LEVEL: 'warn' }, ready: { url: `http://127.0.0.1:${apiPort}/v1/health` } }));
  step(`${WORKERS} workers on the old build and the API running`);

  const workspace = await admin('workspace', 'create', '--name', 'Rolling Deploy Check', '--plan', 'BUSINESS');
  const projects: string[] = [];
  for (let i = 0; i < 3; i++) {
    const project = await admin(
      'project',
      'create',
      '--workspace',
      workspace.id,
      '--type',
      'PERSONAL_BRAND',
      '--name',
      `Rolling ${i}`,
      '--connection',
      'none',
    );
    await admin('connection', 'set', '--workspace', workspace.id, '--project', project.id, '--from-simulator', '--name', `Rolling ${i}`);
    projects.push(project.id);
  }
  const { key } = await admin('key', 'create', '--workspace', workspace.id, '--scopes', 'read,write');

  const firstDue = Date.now() + LEAD_MS;
  const posts: Array<{ id: string; dueMs: number }> = [];
  for (let i = 0; i < POSTS; i++) {
    const dueMs = Math.round(firstDue + (POSTS > 1 ? (SPREAD_MS * i) / (POSTS - 1) : 0));
    const created = await api('POST', '/v1/posts', key, {
      projectId: projects[i % projects.length],
      content: `Rolling deploy check post ${i}`,
      scheduledFor: new Date(dueMs).toISOString(),
    });
    const scheduledAt = new Date(created.data.scheduledAt).getTime();
    if (created.data.status !== 'scheduled' || !Number.isFinite(scheduledAt))
      throw new Error(`post not scheduled: ${JSON.stringify(created.data)}`);
    posts.push({ id: created.data.id, dueMs: scheduledAt });
  }
  step(`${POSTS} posts scheduled from +${((firstDue - Date.now()) / 1000) | 0} s over ${SPREAD_MS / 1000} s`);

  // The roll: one worker at a time, SIGTERM, then its replacement on the new build. It begins a
  // quarter into the spread, so posts fall due before it, on a mixed fleet during it, and after it.
  await sleep(Math.max(0, firstDue + SPREAD_MS / 4 - Date.now()));
  for (let i = 0; i < workers.length; i++) {
    const old = workers[i]!;
    await old.stop();
    const replacement = await startWorker(`worker ${i + 1} (new build)`, newBundle);
    workers[i] = replacement;
    step(`${replacement.name} running (${posts.filter((p) => p.dueMs <= Date.now()).length} of ${POSTS} posts due so far)`);
    if (i < workers.length - 1) await sleep(PAUSE_MS);
  }

  const lastDue = Math.max(...posts.map((p) => p.dueMs));
  await until('every post to be published', Math.max(0, lastDue - Date.now()) + MAX_LAG_MS + 60_000, async () => {
    const rows = await db()('posts')
      .whereIn(
        'id',
        posts.map((p) => p.id),
      )
      .whereNotNull('published_at')
      .count({ n: '*' });
    return Number(rows[0]!.n) === POSTS;
  }).catch(() => undefined);

  const rows: Array<{ id: string; status: string; scheduled_at: Date; published_at: Date | null }> = await db()('posts')
    .whereIn(
      'id',
      posts.map((p) => p.id),
    )
    .select('id', 'status', 'scheduled_at', 'published_at');
  const problems: string[] = [];
  const lags: number[] = [];
  for (const row of rows) {
    if (row.status !== 'published' || !row.published_at) {
      problems.push(`${row.id}: ${row.status}, not published`);
      continue;
    }
    const lag = row.published_at.getTime() - row.scheduled_at.getTime();
    lags.push(lag);
    if (lag < 0) problems.push(`${row.id}: published ${-lag} ms early`);
    if (lag > MAX_LAG_MS) problems.push(`${row.id}: published ${lag} ms late (limit ${MAX_LAG_MS} ms)`);
  }
  // Once on the network: one post per post id, however many create calls the retries made.
  const onNetwork = await sim.control.counts();
  if (onNetwork.posts !== POSTS) problems.push(`the network holds ${onNetwork.posts} posts for ${POSTS} scheduled`);

  // Which runs took the new path, and the replay gate over every run on the new build.
  const { Client, Connection } = await import('@temporalio/client');
  const { patchesIn, runCli } = await import('./replay');
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  let newPath = 0;
  try {
    const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE! });
    for (const p of posts) {
      const history = await client.workflow.getHandle(`publish-${p.id}`).fetchHistory();
      if (patchesIn(history).some((m) => m.id === ROLLING_PATCH)) newPath++;
    }
  } finally {
    await connection.close();
  }
  if (newPath === 0) problems.push('no post reached the publish step on the new build: lengthen --spread');
  const gate = await runCli(
    ['--from-server', '--task-queue', process.env.TEMPORAL_TASK_QUEUE!, '--per-type', 'all', '--bundle', newBundle],
    () => {},
  );
  if (gate.code !== 0) problems.push(`replay gate on the new build: ${gate.lines.join('\n')}`);
  const oldWorkerNondeterminism = children
    .filter((c) => c.name.includes('old build'))
    .flatMap((c) => c.output.filter((l) => /nondetermin/i.test(l))).length;

  lags.sort((a, b) => a - b);
  const q = (p: number) => (lags.length ? lags[Math.min(lags.length - 1, Math.floor(p * lags.length))]! : NaN);
  step(
    `published ${lags.length} of ${POSTS}; lag p50 ${q(0.5)} ms, max ${lags.at(-1)} ms; ${newPath} took the patched path on the new build, ` +
      `${POSTS - newPath} published before; network posts ${onNetwork.posts} (${onNetwork.replays} idempotent replays); ` +
      `old-build workflow tasks failed as nondeterministic: ${oldWorkerNondeterminism}; replay gate on the new build: ${gate.code === 0 ? 'passed' : 'FAILED'}`,
  );
  for (const p of problems) console.error(`✗ ${p}`);
  return problems.length === 0;
}

let ok = false;
try {
  ok = await main();
} catch (err) {
  console.error(`rolling-deploy: ${(err as Error).message}`);
}
for (const c of children.reverse()) await c.stop();
for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error(`cleanup: ${(err as Error).message}`));
console.log(ok ? 'rolling deploy check: passed' : 'rolling deploy check: FAILED');
process.exit(ok ? 0 : 1);
