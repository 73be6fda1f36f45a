// Bench: scheduled publishing under a thundering herd — 10,000 posts due in the same minute, the
// worker SIGKILLed and restarted while they go out. bench/publishing/README.md says what it runs
// and what the figures mean.

import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import type { Cleanups } from './harness/cleanups';
import { postContent, prng } from './harness/content';
import { f0, mib, RESULTS_DIR, s1, step } from './harness/format';
import { diff, machineInfo, postgresCpuGroup, snapshot, type CpuSnapshot, type Groups } from './harness/proc';
import { apiCreator, buildWorkerBundles, createAll, reserveStack, runBench, ServiceProcesses, startStack } from './harness/stack';
import type { CreateItem } from './harness/stack';
import { backlog as queueBacklog, quietSince } from './harness/temporal';
import { runBaseline } from './publishing/baseline';
import { timelines } from './publishing/history';
import { dbWrites, report } from './publishing/report';
import * as S from './publishing/settings';

const { opt } = S;

runBench(
  () => 'publishing',
  (cleanups) => setUp(cleanups).then(async (b) => report(b, await run(b))),
);

// ── Set up: the environment, the stores, Temporal, the simulator, the customer, the bundles ──

export type Bench = Awaited<ReturnType<typeof setUp>>;

async function setUp(cleanups: Cleanups) {
  // Every address chosen and every variable set before the first app module is loaded.
  const reserved = await reserveStack(S.STACK);
  const startedAt = Date.now();
  const { config } = await import('../lib/config');
  const w = config.worker;
  // The worker's heap limit as `npm run start:worker` sets it (WORKER_HEAP_MIB; 0 = Node's own limit).
  const heapLimitMiB = w.heapMiB || v8.getHeapStatistics().heap_size_limit / 1024 / 1024;
  const machine = machineInfo();
  const spread = S.SPREAD_MS ? `spread over ${S.SPREAD_MS / 1000} s from` : 'all at';
  const kill = `SIGKILLed at ${Math.round(opt['kill-at'] * 100)}% published and restarted ${opt['restart-delay']} s later`;
  const heap = `${f0(heapLimitMiB)} MiB${w.heapMiB ? ' (WORKER_HEAP_MIB, --worker-heap)' : " (Node's)"}`;
  const bundle = S.PREBUILT ? 'pre-built by the bench' : 'bundled by each worker at start-up';
  console.log(`publishing bench — ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  console.log(
    `  ${f0(S.POSTS)} posts over ${opt.projects} account(s), due ${spread} one hh:mm:00, PUBLISH_DELAY_SECONDS=0; worker ${S.KILL ? kill : 'never killed (baseline)'}`,
  );
  console.log(
    `  worker: WORKER_ACTIVITY_CONCURRENCY=${w.activityConcurrency}, WORKER_WORKFLOW_CONCURRENCY=${w.workflowConcurrency}, DB pool max ${config.dbPoolMax} per process (lib/db), workflow cache ${f0(w.maxCachedWorkflows)} (WORKER_MAX_CACHED_WORKFLOWS), heap limit ${heap}, workflow bundle ${bundle}; network createPost latency ${opt['network-latency']} ms`,
  );

  const stack = await startStack(reserved, cleanups);
  step(`database ${stack.db} (reset + migrated), Redis ${S.STACK.redisUrl} (flushed)`);
  step(`${stack.temporal.describe}; task queue ${stack.taskQueue}; fairness ${S.STACK.fairness ? 'on' : 'off (--no-fairness)'}`);
  if (opt['network-latency']) await stack.sim.setLatency({ ms: opt['network-latency'], operation: 'createPost' });
  step(`network simulator in this process at ${stack.simulator.url}`);

  // The accounts the posts go round, and one more for the pilot.
  const { connectedWorkspace } = await import('./harness/seed');
  const person = (i: number) => ({ personId: `bench${i}`, name: `Bench Person ${i}`, vanityName: `bench-person-${i}` });
  const o = { name: 'Publishing Bench Co', accounts: opt.projects + 1, person, scopes: ['write'], keyName: 'publishing bench' };
  const ws = await connectedWorkspace(stack.sim, o);
  const s = { workspaceId: ws.id, apiKey: ws.key, projectIds: ws.projectIds.slice(0, -1), pilotProjectId: ws.projectIds.at(-1)! };
  step(`seeded workspace ${s.workspaceId}: ${opt.projects} connected personal-brand project(s) + 1 pilot project, write API key`);

  // The workers inherit the bench's environment; this adds the pre-built bundles.
  const t0 = Date.now();
  const bundles = S.PREBUILT ? await buildWorkerBundles(RESULTS_DIR, 'publishing') : null;
  if (bundles) step(`workflow bundles built in ${s1(Date.now() - t0)} s; the workers load them (--worker-bundle prebuilt)`);
  const env = bundles ? { WORKFLOW_BUNDLE_PATH: bundles.service, BENCH_BASELINE_BUNDLE_PATH: bundles.baseline } : {};
  return { ...stack, startedAt, config, heapLimitMiB, cleanups, env, s };
}

// ── Run: the baselines, the workers, the herd created, the drain ─────────────────────────────

export type Run = Awaited<ReturnType<typeof run>>;

async function run(b: Bench) {
  const baselines = [];
  const sizes = { n: S.POSTS, concurrency: opt.concurrency, workers: opt.workers, deadlineMs: opt.deadline * 1000 };
  for (const kind of S.BASELINE ? (['bare-timer', 'timer+activity'] as const) : []) baselines.push(await runBaseline(b, kind, sizes));
  // Worker #1, and with --workers N the others (never killed: they keep draining while #1 is down), each polling before the next starts.
  const execArgv = (index: number) => {
    if (!opt['worker-profile']) return [];
    fs.rmSync(S.profileDir(index), { recursive: true, force: true });
    return ['--cpu-prof', `--cpu-prof-dir=${S.profileDir(index)}`];
  };
  const procs = new ServiceProcesses({ name: 'publishing', env: b.env, execArgv });
  b.cleanups.push(() => procs.stop());
  while (procs.workers.length < opt.workers) {
    const w = await procs.startWorker();
    await w.waitReady(b.connection, b.taskQueue);
    const how = S.PREBUILT ? 'pre-built workflow bundle loaded' : 'workflow bundle built at start-up';
    step(`worker #${w.index} pid ${w.pid} polling after ${s1(w.readyAt! - w.startedAt)} s${w.index === 1 ? ` (${how})` : ''}`);
  }
  const created = await createPosts(b, procs);
  return { baselines, workers: procs.workers, ...created, ...(await drain(b, procs, created)) };
}

/** The bench's processes by CPU group; every other process is "other". */
async function cpuGroups(b: Bench, procs: ServiceProcesses): Promise<Groups> {
  const temporal = new Set(b.temporal.pids());
  return {
    worker: (p) => procs.workers.some((w) => w.pid === p.pid),
    temporal: (p) => temporal.has(p.pid),
    postgres: await postgresCpuGroup(b.mon, b.db),
    // On the cluster: the backends serving the Temporal server's two databases.
    'postgres (temporal)': await postgresCpuGroup(b.mon, b.temporal.databases, { backendsOnly: true }),
    redis: (p) => p.comm.startsWith('redis-server'),
    'bench+sim': (p) => p.pid === process.pid,
    api: (p) => procs.apis.some((a) => a.pid === p.pid),
  };
}

/** --create in-process: the handler of POST /v1/posts minus HTTP, auth and validation: the same transaction and after-commit signal-with-start. */
async function inProcessCreator(workspaceId: string) {
  const { db } = await import('../lib/db');
  const { insertPost } = await import('../lib/posts/write');
  const { afterPostCommitted } = await import('../lib/posts/afterCommit');
  const create = async ({ projectId, content, scheduledFor }: CreateItem) => {
    const post = { workspaceId, projectId, content, contentType: 'PERSONAL', scheduledAt: scheduledFor };
    const committed = await db().transaction((trx) => insertPost(trx, post));
    await afterPostCommitted(committed);
    return committed.post.id;
  };
  return { create, close: () => undefined };
}

/** The pilot, the due minute it gives, then the herd: every post created before it is due. */
async function createPosts(b: Bench, procs: ServiceProcesses) {
  const api = opt.create === 'api' ? await procs.startApi() : null;
  const creator = api ? apiCreator(api.port, b.s.apiKey, opt.concurrency) : await inProcessCreator(b.s.workspaceId);
  const via = api
    ? `API process pid ${api.pid} on :${api.port}; posts are created with POST /v1/posts`
    : 'posts are created in this process through insertPost + afterPostCommitted';
  step(`${via} (${opt.concurrency} in flight)`);
  const backlog = () => queueBacklog(b.connection, b.taskQueue);
  /** When the task queue has stayed empty for 2 s (every new workflow is armed); null if not before `until`. */
  const waitIdle = (until: number) => quietSince(b.connection, b.taskQueue, until);
  const rand = prng(20261122);
  const item = (projectId: string, scheduledFor: Date): CreateItem => ({ projectId, content: postContent(rand), scheduledFor });

  const pilotDue = new Date(Date.now() + 7 * 86_400_000);
  const pilotStart = Date.now();
  const pilotItems = Array.from({ length: opt.pilot }, () => item(b.s.pilotProjectId, pilotDue));
  const pilot = await createAll(pilotItems, creator.create, opt.concurrency);
  if (pilot.errors) throw new Error(`pilot creates failed (${pilot.errors}): ${pilot.errorSamples.join(' | ')}`);
  // A post is ready once its workflow is armed; the worker does that for new workflows more slowly
  // than the API creates them, so the due time comes from the rate at which pilot posts became ready.
  const pilotIdle = await waitIdle(Date.now() + 180_000);
  const { workflowIds } = await import('../lib/temporal/client');
  const checked = pilot.ids.slice(0, 20).map((id) => ({ workflowId: workflowIds.publish(id!), postId: id!, dueMs: pilotDue.getTime() }));
  const pilotArmed = (await timelines(b.client, checked)).ok.filter((t) => t.timerStarted != null).length;
  const pilotReadyRate = opt.pilot / (((pilotIdle ?? Date.now()) - pilotStart) / 1000);
  const estimateMs = (S.POSTS / Math.min(pilot.rate, pilotReadyRate)) * 1000;
  const dueMs = Math.ceil((Date.now() + estimateMs * 1.3 + opt.margin * 1000) / 60_000) * 60_000;
  step(
    `pilot: ${opt.pilot} posts (due in 7 days) created at ${f0(pilot.rate)} posts/s (p50 ${pilot.latencyMs.p50.toFixed(0)} ms), ready (start delay or timer set) at ${pilotReadyRate.toFixed(1)} posts/s${pilotIdle ? '' : ' (task queue never drained)'}, ${pilotArmed}/${checked.length} checked are armed (start delay or timer) → ${f0(S.POSTS)} posts ≈ ${s1(estimateMs)} s; due minute ${new Date(dueMs).toISOString()} (in ${s1(dueMs - Date.now())} s)`,
  );

  const items = Array.from({ length: S.POSTS }, (_, i) =>
    item(b.s.projectIds[i % opt.projects]!, new Date(dueMs + Math.floor((i * S.SPREAD_MS) / S.POSTS))),
  );
  const cpu0 = snapshot();
  const writes0 = await dbWrites(b);
  const progress = (n: number) =>
    void backlog().then(
      (q) => console.log(`    ${f0(n)} created, ${s1(dueMs - Date.now())} s before due, ${f0(q)} tasks queued`),
      () => undefined,
    );
  const created = await createAll(items, creator.create, opt.concurrency, progress);
  const createCpu = diff(cpu0, snapshot(), await cpuGroups(b, procs));
  creator.close();
  const finishedBeforeDueMs = dueMs - Date.now();
  const { latencyMs: lat, errors } = created;
  step(
    `created ${f0(S.POSTS - errors)} posts in ${s1(created.durationMs)} s (${f0(created.rate)} posts/s, p50 ${lat.p50.toFixed(0)} ms, p99 ${lat.p99.toFixed(0)} ms, ${errors} errors), ${s1(finishedBeforeDueMs)} s before due`,
  );
  if (errors) console.log(`    create errors: ${created.errorSamples.join(' | ')}`);
  if (finishedBeforeDueMs < 0) console.log('    NOTE: creation ran past the due time: raise --margin');
  const unsynced = 'select count(*)::int as n from posts where project_id = any($1) and workflow_synced_version < schedule_version';
  const unsyncedWorkflows: number = (await b.mon.query(unsynced, [b.s.projectIds])).rows[0].n;
  if (unsyncedWorkflows)
    console.log(`    NOTE: ${unsyncedWorkflows} posts' signal-with-start failed; the reconciler (every 30 s) has to start their workflows`);
  const dueOf = new Map(items.flatMap((it, i) => (created.ids[i] ? [[created.ids[i], it.scheduledFor.getTime()] as const] : [])));
  // The API is idle from here on; stopping it leaves the worker alone on the database.
  await api?.stop();
  const readyAt = await waitIdle(dueMs - 2_000);
  const tasksQueuedAtDue = readyAt ? 0 : await backlog();
  step(
    readyAt
      ? `every publish workflow is armed (start delay or timer): task queue empty ${s1(readyAt - (dueMs - finishedBeforeDueMs))} s after the last create, ${s1(dueMs - readyAt)} s before due`
      : `NOTE: ${f0(tasksQueuedAtDue)} tasks still queued at the due time: some publish workflows have not set their timer yet (creation backlog spills into the due minute)`,
  );
  const { ids: _, durationMs, ...figures } = created;
  const summary = {
    pilot: { posts: opt.pilot, rate: pilot.rate, latencyMs: pilot.latencyMs },
    estimateS: estimateMs / 1000,
    durationS: durationMs / 1000,
    ...figures,
    finishedBeforeDueS: finishedBeforeDueMs / 1000,
    unsyncedWorkflows,
    pilotReadyRate,
    tasksQueuedAtDue,
    allReadyBeforeDueS: readyAt ? (dueMs - readyAt) / 1000 : null,
  };
  return { workflowIds, dueMs, writes0, created, createCpu, finishedBeforeDueMs, dueOf, summary };
}

const ACTIVITY = `select count(*)::int as connections, count(*) filter (where state = 'active')::int as active,
  count(*) filter (where state = 'idle in transaction')::int as "idleInTransaction", count(*) filter (where wait_event_type = 'Lock')::int as "lockWaits"
  from pg_stat_activity where datname = $1 and backend_type = 'client backend' and pid <> pg_backend_pid()`;
const PUBLISHED = `select count(*) filter (where status = 'published')::int as published,
  count(*) filter (where status = 'failed_to_publish')::int as failed from posts where project_id = any($1)`;

/** Due time → everything published (or the deadline), the worker killed and restarted on the way. */
async function drain(b: Bench, procs: ServiceProcesses, { dueMs, dueOf }: Awaited<ReturnType<typeof createPosts>>) {
  const expected = dueOf.size;
  const lastDue = dueMs + S.SPREAD_MS;
  const wait = dueMs - Date.now() - 3_000;
  if (wait > 0) step(`waiting ${s1(wait)} s for the due time`);
  await sleep(Math.max(0, wait));

  // One /proc snapshot a second from the due time, so CPU can be split by window afterwards
  // (steady state before the kill, the bulk of the drain without the idle wait for stranded activities).
  const cpuSnaps: Array<{ wall: number; snap: CpuSnapshot }> = [];
  const cpuSnap = (wall = Date.now()) => cpuSnaps.push({ wall, snap: snapshot() });
  const progress: Array<{ t: number; published: number }> = [];
  // pg_stat_activity of the bench database every other poll from the due time, by column.
  const activity: Record<string, number[]> = { connections: [], active: [], idleInTransaction: [], lockWaits: [] };
  let killedAt: number | null = null;
  let publishedAtKill = 0;
  let restart: Promise<unknown> | null = null;
  let restartError: unknown = null;
  let printed = { t: 0, published: 0 };
  const killAt = { published: opt['kill-at'] * expected, t: dueMs + opt['kill-fallback'] * 1000 };
  step(`due at ${new Date(dueMs).toISOString().slice(11, 23)} — polling the posts table every 250 ms`);
  for (let tick = 0; ; tick++) {
    const now = Date.now();
    if (now >= dueMs && (!cpuSnaps.length || now - cpuSnaps.at(-1)!.wall >= 1000)) cpuSnap(now);
    const { published, failed } = (await b.mon.query(PUBLISHED, [b.s.projectIds])).rows[0];
    progress.push({ t: now, published });
    if (tick % 2 === 0 && now >= dueMs)
      for (const [k, v] of Object.entries((await b.mon.query(ACTIVITY, [b.db])).rows[0])) activity[k]!.push(v as number);
    if (now - printed.t >= 5_000 && now >= dueMs - 1_000) {
      const w = procs.worker;
      const rate = printed.t ? ((published - printed.published) * 1000) / (now - printed.t) : 0;
      console.log(
        `    t=${s1(now - dueMs).padStart(6)} s  published ${f0(published).padStart(6)}/${f0(expected)}  ${f0(rate).padStart(5)}/s  failed ${failed}  worker #${w.index} ${w.exit ? 'dead' : `RSS ${mib(w.samples.at(-1)?.rssKiB ?? 0)}`}`,
      );
      printed = { t: now, published };
    }
    if (S.KILL && killedAt === null && now >= dueMs && (published >= killAt.published || now >= killAt.t)) {
      // The steady-state CPU window ends here, with the worker still alive (a big process can
      // take a while to exit, and /proc forgets it once it has).
      killedAt = Date.now();
      cpuSnap(killedAt);
      await procs.workers[0]!.kill('SIGKILL');
      publishedAtKill = published;
      console.log(
        `    SIGKILL worker #1 at t=${s1(killedAt - dueMs)} s with ${f0(published)} published (${((published / expected) * 100).toFixed(1)}%); it was gone ${Date.now() - killedAt} ms later`,
      );
      restart = (async () => {
        await sleep(opt['restart-delay'] * 1000);
        const w = await procs.startWorker();
        await w.waitReady(b.connection, b.taskQueue);
        console.log(
          `    worker #${w.index} pid ${w.pid} started at t=${s1(w.startedAt - dueMs)} s, polling at t=${s1(w.readyAt! - dueMs)} s`,
        );
      })().catch((err) => (restartError = err));
    }
    if (restartError) throw restartError;
    if (published + failed >= expected) break;
    if (now > lastDue + opt.deadline * 1000) {
      console.log(`    deadline reached: ${expected - published - failed} posts still scheduled`);
      break;
    }
    await sleep(250);
  }
  cpuSnap();
  const drainEnd = Date.now();
  await restart;
  const w2 = killedAt ? procs.worker : null;
  return { expected, lastDue, groups: () => cpuGroups(b, procs), cpuSnaps, progress, activity, killedAt, publishedAtKill, w2, drainEnd };
}
