import { setTimeout as sleep } from 'node:timers/promises';
import { diff, postgresCpuGroup, snapshot, type CpuSnapshot, type Groups } from '../harness/proc';
import { postContent, prng } from '../harness/content';
import { f0, mib, s1, step } from '../harness/format';
import { apiCreator, createAll, type ApiChild, type CreateItem, type Creator, type WorkerRun } from '../harness/stack';
import { backlog as queueBacklog, quietSince } from '../harness/temporal';
import { BENCH_DB, KILL, opt, POSTS, SPREAD_MS, TASK_QUEUE } from './settings';
import type { Bench, Creation, Fleet } from '../publishing';

/** --create in-process: the handler of POST /v1/posts minus HTTP, auth and validation: the same transaction and after-commit signal-with-start. */
async function inProcessCreator(workspaceId: string): Promise<{ create: Creator; close(): void }> {
  const { db } = await import('../../lib/db');
  const { insertPost } = await import('../../lib/posts/write');
  const { afterPostCommitted } = await import('../../lib/posts/afterCommit');
  const create: Creator = async ({ projectId, content, scheduledFor }) => {
    const post = { workspaceId, projectId, content, contentType: 'PERSONAL', scheduledAt: scheduledFor };
    const committed = await db().transaction((trx) => insertPost(trx, post));
    await afterPostCommitted(committed);
    return committed.post.id;
  };
  return { create, close: () => undefined };
}

/** The bench's processes by CPU group; every other process is "other". */
async function cpuGroups(bench: Bench, workers: WorkerRun[], api: ApiChild | null): Promise<Groups> {
  const workerPids = new Set(workers.map((w) => w.pid));
  const temporalNow = new Set(bench.temporal.pids());
  return {
    worker: (p) => workerPids.has(p.pid),
    temporal: (p) => temporalNow.has(p.pid),
    postgres: await postgresCpuGroup(bench.mon, BENCH_DB),
    // On the cluster: the backends serving the Temporal server's two databases.
    'postgres (temporal)': await postgresCpuGroup(bench.mon, bench.temporal.databases, { backendsOnly: true }),
    redis: (p) => p.comm.startsWith('redis-server'),
    'bench+sim': (p) => p.pid === process.pid,
    api: (p) => api !== null && p.pid === api.pid,
  };
}

/** The pilot, the due minute it gives, then the herd: every post created before it is due. */
export async function createPosts(bench: Bench, fleet: Fleet) {
  const concurrency = opt.concurrency;
  const api = opt.create === 'api' ? await fleet.procs.startApi() : null;
  const creator = api ? apiCreator(api.port, bench.s.apiKey, concurrency) : await inProcessCreator(bench.s.workspaceId);
  const via = api
    ? `API process pid ${api.pid} on :${api.port}; posts are created with POST /v1/posts`
    : 'posts are created in this process through insertPost + afterPostCommitted';
  step(`${via} (${concurrency} in flight)`);
  const backlog = () => queueBacklog(bench.connection, TASK_QUEUE);
  /** When the task queue has stayed empty for 2 s (every new workflow is armed); null if not before `until`. */
  const waitIdle = (until: number) => quietSince(bench.connection, TASK_QUEUE, until);

  const rand = prng(20261122);
  const pilotDue = new Date(Date.now() + 7 * 86_400_000);
  const pilotItems = Array.from({ length: opt.pilot }, () => ({
    projectId: bench.s.pilotProjectId,
    content: postContent(rand),
    scheduledFor: pilotDue,
  }));
  const pilotStart = Date.now();
  const pilot = await createAll(pilotItems, creator.create, concurrency);
  if (pilot.errors) throw new Error(`pilot creates failed (${pilot.errors}): ${pilot.errorSamples.join(' | ')}`);
  // A post is ready once its workflow is armed; the worker does that for new workflows more slowly
  // than the API creates them, so the due time comes from the rate at which pilot posts became ready.
  const pilotIdle = await waitIdle(Date.now() + 180_000);
  const { timeline } = await import('./history');
  const { workflowIds } = await import('../../lib/temporal/client');
  const pilotChecked = await Promise.all(
    pilot.ids
      .filter((x): x is string => !!x)
      .slice(0, 20)
      .map((id) => timeline(bench.tclient, workflowIds.publish(id), id, pilotDue.getTime()).catch(() => null)),
  );
  const pilotArmed = pilotChecked.filter((t) => t?.timerStarted != null).length;
  const readyRate = opt.pilot / (((pilotIdle ?? Date.now()) - pilotStart) / 1000);
  const estimateMs = (POSTS / Math.min(pilot.rate, readyRate)) * 1000;
  const dueMs = Math.ceil((Date.now() + estimateMs * 1.3 + opt.margin * 1000) / 60_000) * 60_000;
  step(
    `pilot: ${opt.pilot} posts (due in 7 days) created at ${f0(pilot.rate)} posts/s (p50 ${pilot.latencyMs.p50.toFixed(0)} ms), ready (start delay or timer set) at ${readyRate.toFixed(1)} posts/s${pilotIdle ? '' : ' (task queue never drained)'}, ${pilotArmed}/${pilotChecked.length} checked are armed (start delay or timer) → ${f0(POSTS)} posts ≈ ${s1(estimateMs)} s; due minute ${new Date(dueMs).toISOString()} (in ${s1(dueMs - Date.now())} s)`,
  );

  const items: CreateItem[] = Array.from({ length: POSTS }, (_, i) => ({
    projectId: bench.s.projectIds[i % opt.projects]!,
    content: postContent(rand),
    scheduledFor: new Date(dueMs + (SPREAD_MS ? Math.floor((i * SPREAD_MS) / POSTS) : 0)),
  }));
  const cpuCreate0 = snapshot();
  const writes0 = await bench.dbWrites();
  const progress = (n: number) =>
    void backlog().then(
      (b) => console.log(`    ${f0(n)} created, ${s1(dueMs - Date.now())} s before due, ${f0(b)} tasks queued`),
      () => undefined,
    );
  const created = await createAll(items, creator.create, concurrency, progress);
  const createCpu = diff(cpuCreate0, snapshot(), await cpuGroups(bench, fleet.workers, api));
  creator.close();
  const finishedBeforeDueMs = dueMs - Date.now();
  const lat = created.latencyMs;
  step(
    `created ${f0(POSTS - created.errors)} posts in ${s1(created.durationMs)} s (${f0(created.rate)} posts/s, p50 ${lat.p50.toFixed(0)} ms, p99 ${lat.p99.toFixed(0)} ms, ${created.errors} errors), ${s1(finishedBeforeDueMs)} s before due`,
  );
  if (created.errors) console.log(`    create errors: ${created.errorSamples.join(' | ')}`);
  if (finishedBeforeDueMs < 0) console.log('    NOTE: creation ran past the due time: raise --margin');
  const unsynced: number = (
    await bench.mon.query(
      `select count(*)::int as n from posts where project_id = any($1) and workflow_synced_version < schedule_version`,
      [bench.s.projectIds],
    )
  ).rows[0].n;
  if (unsynced)
    console.log(`    NOTE: ${unsynced} posts' signal-with-start failed; the reconciler (every 30 s) has to start their workflows`);
  const dueOf = new Map<string, number>();
  items.forEach((it, i) => created.ids[i] && dueOf.set(created.ids[i], it.scheduledFor.getTime()));
  // The API is idle from here on; stopping it leaves the worker alone on the database.
  if (api) await api.stop();
  const readyAt = await waitIdle(dueMs - 2_000);
  const backlogAtDue = readyAt ? 0 : await backlog();
  if (readyAt)
    step(
      `every publish workflow is armed (start delay or timer): task queue empty ${s1(readyAt - (dueMs - finishedBeforeDueMs))} s after the last create, ${s1(dueMs - readyAt)} s before due`,
    );
  else
    step(
      `NOTE: ${f0(backlogAtDue)} tasks still queued at the due time: some publish workflows have not set their timer yet (creation backlog spills into the due minute)`,
    );
  const summary = {
    pilot: { posts: opt.pilot, rate: pilot.rate, latencyMs: pilot.latencyMs },
    estimateS: estimateMs / 1000,
    durationS: created.durationMs / 1000,
    rate: created.rate,
    latencyMs: created.latencyMs,
    errors: created.errors,
    errorSamples: created.errorSamples,
    finishedBeforeDueS: finishedBeforeDueMs / 1000,
    unsyncedWorkflows: unsynced,
    pilotReadyRate: readyRate,
    allReadyBeforeDueS: readyAt ? (dueMs - readyAt) / 1000 : null,
    tasksQueuedAtDue: backlogAtDue,
  };
  return { api, workflowIds, dueMs, writes0, created, createCpu, finishedBeforeDueMs, dueOf, summary };
}

/** Due time → everything published (or the deadline), the worker killed and restarted on the way. */
export async function drainPosts(bench: Bench, state: Fleet & Creation) {
  const { dueMs, workers } = state;
  const expected = state.dueOf.size;
  const lastDue = dueMs + SPREAD_MS;
  const wait = dueMs - Date.now() - 3_000;
  if (wait > 0) {
    step(`waiting ${s1(wait)} s for the due time`);
    await sleep(wait);
  }

  // One /proc snapshot a second from the due time, so CPU can be split by window afterwards
  // (steady state before the kill, the bulk of the drain without the idle wait for stranded activities).
  const cpuSnaps: Array<{ wall: number; snap: CpuSnapshot }> = [];
  const cpuSnap = (wall = Date.now()) => cpuSnaps.push({ wall, snap: snapshot() });
  const progress: Array<{ t: number; published: number }> = [];
  const activity: Array<{ t: number; connections: number; active: number; idleInTx: number; lockWaits: number }> = [];
  let killedAt: number | null = null;
  let publishedAtKill = 0;
  let restart: Promise<void> | null = null;
  let restartError: unknown = null;
  let w2: WorkerRun | null = null;
  let lastPrint = 0;
  let lastPrintCount = 0;
  step(`due at ${new Date(dueMs).toISOString().slice(11, 23)} — polling the posts table every 250 ms`);
  for (let tick = 0; ; tick++) {
    const now = Date.now();
    if (now >= dueMs && (!cpuSnaps.length || now - cpuSnaps.at(-1)!.wall >= 1000)) cpuSnap(now);
    const { published, failed } = (
      await bench.mon.query(
        `select count(*) filter (where status = 'published')::int as published, count(*) filter (where status = 'failed_to_publish')::int as failed from posts where project_id = any($1)`,
        [bench.s.projectIds],
      )
    ).rows[0];
    progress.push({ t: now, published });
    if (tick % 2 === 0) {
      const { rows } = await bench.mon.query(
        `select count(*)::int as connections, count(*) filter (where state = 'active')::int as active,
           count(*) filter (where state = 'idle in transaction')::int as "idleInTx", count(*) filter (where wait_event_type = 'Lock')::int as "lockWaits"
         from pg_stat_activity where datname = $1 and backend_type = 'client backend' and pid <> pg_backend_pid()`,
        [BENCH_DB],
      );
      activity.push({ t: now, ...rows[0] });
    }
    if (now - lastPrint >= 5_000 && now >= dueMs - 1_000) {
      const w = workers.at(-1)!;
      const rate = lastPrint ? ((published - lastPrintCount) * 1000) / (now - lastPrint) : 0;
      console.log(
        `    t=${s1(now - dueMs).padStart(6)} s  published ${f0(published).padStart(6)}/${f0(expected)}  ${f0(rate).padStart(5)}/s  failed ${failed}  worker #${w.index} ${w.exit ? 'dead' : `RSS ${mib(w.samples.at(-1)?.rssKiB ?? 0)}`}`,
      );
      lastPrint = now;
      lastPrintCount = published;
    }
    if (
      KILL &&
      killedAt === null &&
      now >= dueMs &&
      (published >= opt['kill-at'] * expected || now >= dueMs + opt['kill-fallback'] * 1000)
    ) {
      // The steady-state CPU window ends here, with the worker still alive (a big process can
      // take a while to exit, and /proc forgets it once it has).
      killedAt = Date.now();
      cpuSnap(killedAt);
      await state.w1.kill('SIGKILL');
      publishedAtKill = published;
      console.log(
        `    SIGKILL worker #1 at t=${s1(killedAt - dueMs)} s with ${f0(published)} published (${((published / expected) * 100).toFixed(1)}%); it was gone ${Date.now() - killedAt} ms later`,
      );
      restart = (async () => {
        await sleep(opt['restart-delay'] * 1000);
        const w = (w2 = await state.launch());
        await w.waitReady(bench.connection, TASK_QUEUE);
        console.log(
          `    worker #${w.index} pid ${w.pid} started at t=${s1(w.startedAt - dueMs)} s, polling at t=${s1(w.readyAt! - dueMs)} s`,
        );
      })().catch((err) => {
        restartError = err;
      });
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
  if (restart) await restart;
  const groups = () => cpuGroups(bench, workers, state.api);
  return { expected, lastDue, groups, cpuSnaps, progress, activity, killedAt, publishedAtKill, w2: w2 as WorkerRun | null, drainEnd };
}
