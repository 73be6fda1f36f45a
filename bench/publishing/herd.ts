import { diff, snapshot, type CpuSnapshot, type Groups } from '../harness/proc';
import { postContent, prng } from '../harness/content';
import { type WorkerRun } from './worker';
import { apiCreator, createAll, inProcessCreator, startApi, type ApiChild, type CreateItem, type Creator } from './creation';
import { type ActivitySample } from './measure';
import {
  BENCH_DB,
  CONCURRENCY,
  CREATE,
  DEADLINE_MS,
  KILL,
  KILL_AT,
  KILL_FALLBACK_MS,
  MARGIN_MS,
  PILOT,
  POSTS,
  PROJECTS,
  RESTART_DELAY_MS,
  SPREAD_MS,
  TASK_QUEUE,
} from './settings';
import { setTimeout as sleep } from 'node:timers/promises';
import { f0, mib, s1, step } from '../harness/format';
import { backlog as queueBacklog, quietSince } from '../harness/taskQueue';
import type { Bench, Creation, Fleet } from '../publishing';

/** The pilot, the due minute it gives, then the herd: every post created before it is due. */
export async function createPosts(bench: Bench) {
  // ── Creation ──────────────────────────────────────────────────────────────────────────
  let api: ApiChild | null = null;
  let creator: { create: Creator; close(): void };
  if (CREATE === 'api') {
    api = await startApi();
    bench.cleanups.push(() => api!.stop());
    creator = apiCreator(api.port, bench.s.apiKey, CONCURRENCY);
    step(`API process pid ${api.pid} on :${api.port}; posts are created with POST /v1/posts (${CONCURRENCY} in flight)`);
  } else {
    creator = await inProcessCreator(bench.s.workspaceId);
    step(`posts are created in this process through insertPost + afterPostCommitted (${CONCURRENCY} in flight)`);
  }

  const rand = prng(20261122);
  const pilotDue = new Date(Date.now() + 7 * 86_400_000);
  const pilotItems: CreateItem[] = Array.from({ length: PILOT }, () => ({
    projectId: bench.s.pilotProjectId,
    content: postContent(rand),
    scheduledFor: pilotDue,
  }));
  const backlog = () => queueBacklog(bench.connection, TASK_QUEUE);
  /** When the task queue has stayed empty for 2 s (every new workflow has run its first tasks and set its timer); null if not before `until`. */
  const waitIdle = (until: number) => quietSince(bench.connection, TASK_QUEUE, until);

  const pilotStart = Date.now();
  const pilot = await createAll(pilotItems, creator.create, CONCURRENCY);
  if (pilot.errors) throw new Error(`pilot creates failed (${pilot.errors}): ${pilot.errorSamples.join(' | ')}`);
  // A post is ready once its workflow has loaded the schedule and set its timer; the worker
  // does that for new workflows more slowly than the API creates them, so the due time is
  // estimated from the rate at which pilot posts became ready, not from the create rate.
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
  const readyRate = PILOT / (((pilotIdle ?? Date.now()) - pilotStart) / 1000);
  const estimateMs = (POSTS / Math.min(pilot.rate, readyRate)) * 1000;
  const earliest = Date.now() + estimateMs * 1.3 + MARGIN_MS;
  const dueMs = Math.ceil(earliest / 60_000) * 60_000;
  step(
    `pilot: ${PILOT} posts (due in 7 days) created at ${f0(pilot.rate)} posts/s (p50 ${pilot.latencyMs.p50.toFixed(0)} ms), ready (start delay or timer set) at ${readyRate.toFixed(1)} posts/s${pilotIdle ? '' : ' (task queue never drained)'}, ${pilotArmed}/${pilotChecked.length} checked are armed (start delay or timer) → ${f0(POSTS)} posts ≈ ${s1(estimateMs)} s; due minute ${new Date(dueMs).toISOString()} (in ${s1(dueMs - Date.now())} s)`,
  );

  const items: CreateItem[] = Array.from({ length: POSTS }, (_, i) => ({
    projectId: bench.s.projectIds[i % PROJECTS]!,
    content: postContent(rand),
    scheduledFor: new Date(dueMs + (SPREAD_MS ? Math.floor((i * SPREAD_MS) / POSTS) : 0)),
  }));
  const cpuCreate0 = snapshot();
  const writes0 = await bench.dbWrites();
  const created = await createAll(
    items,
    creator.create,
    CONCURRENCY,
    (n) =>
      void backlog().then(
        (b) => console.log(`    ${f0(n)} created, ${s1(dueMs - Date.now())} s before due, ${f0(b)} tasks queued`),
        () => undefined,
      ),
  );
  const cpuCreate1 = snapshot();
  creator.close();
  const finishedBeforeDueMs = dueMs - Date.now();
  step(
    `created ${f0(POSTS - created.errors)} posts in ${s1(created.durationMs)} s (${f0(created.rate)} posts/s, p50 ${created.latencyMs.p50.toFixed(0)} ms, p99 ${created.latencyMs.p99.toFixed(0)} ms, ${created.errors} errors), ${s1(finishedBeforeDueMs)} s before due`,
  );
  if (created.errors) console.log(`    create errors: ${created.errorSamples.join(' | ')}`);
  if (finishedBeforeDueMs < 0) console.log('    NOTE: creation ran past the due time: raise --margin');
  const unsynced = Number(
    (
      await bench.mon.query(
        `select count(*)::int as n from posts where project_id = any($1) and workflow_synced_version < schedule_version`,
        [bench.s.projectIds],
      )
    ).rows[0].n,
  );
  if (unsynced)
    console.log(`    NOTE: ${unsynced} posts' signal-with-start failed; the reconciler (every 30 s) has to start their workflows`);
  const dueOf = new Map<string, number>();
  items.forEach((it, i) => {
    if (created.ids[i]) dueOf.set(created.ids[i]!, it.scheduledFor.getTime());
  });
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
  return {
    api,
    pilot,
    workflowIds,
    readyRate,
    estimateMs,
    dueMs,
    cpuCreate0,
    writes0,
    created,
    cpuCreate1,
    finishedBeforeDueMs,
    unsynced,
    dueOf,
    readyAt,
    backlogAtDue,
  };
}

/** Due time → everything published (or the deadline), the worker killed and restarted on the way. */
export async function drainPosts(bench: Bench, state: Fleet & Creation) {
  // ── Drain: due time → everything published (or the deadline) ──────────────────────────
  const expected = state.dueOf.size;
  const lastDue = state.dueMs + (SPREAD_MS ? SPREAD_MS : 0);
  const wait = state.dueMs - Date.now() - 3_000;
  if (wait > 0) {
    step(`waiting ${s1(wait)} s for the due time`);
    await sleep(wait);
  }

  const pgGroups = async (): Promise<Groups> => {
    const { rows } = await bench.mon.query<{ pid: number; datname: string | null; backend_type: string }>(
      'select pid, datname, backend_type from pg_stat_activity',
    );
    const foreign = new Set(rows.filter((r) => r.backend_type === 'client backend' && r.datname !== BENCH_DB).map((r) => r.pid));
    const temporalBackends = new Set(rows.filter((r) => r.datname !== null && bench.temporalDbs.includes(r.datname)).map((r) => r.pid));
    const workerPids = new Set(state.workers.map((w) => w.pid));
    const temporalNow = new Set(bench.temporalPids());
    return {
      worker: (p) => workerPids.has(p.pid),
      temporal: (p) => temporalNow.has(p.pid),
      postgres: (p) => p.comm === 'postgres' && !foreign.has(p.pid),
      // On the cluster: the backends serving the Temporal server's two databases.
      'postgres (temporal)': (p) => temporalBackends.has(p.pid),
      redis: (p) => p.comm.startsWith('redis-server'),
      'bench+sim': (p) => p.pid === process.pid,
      api: (p) => state.api !== null && p.pid === state.api.pid,
    };
  };
  const createCpu = diff(state.cpuCreate0, state.cpuCreate1, await pgGroups());

  let cpuDrain0: CpuSnapshot = snapshot();
  // One /proc snapshot a second, so CPU can be split by window afterwards (steady state
  // before the kill, the bulk of the drain without the idle wait for stranded activities).
  const cpuSnaps: Array<{ wall: number; snap: CpuSnapshot }> = [];
  let killSnap: { wall: number; snap: CpuSnapshot } | null = null;
  const progress: Array<{ t: number; published: number }> = [];
  const activity: ActivitySample[] = [];
  let killedAt: number | null = null;
  let publishedAtKill = 0;
  let restart: Promise<void> | null = null;
  let restartError: unknown = null;
  let w2: WorkerRun | null = null;
  let published = 0;
  let failed = 0;
  let lastPrint = 0;
  let lastPrintCount = 0;
  let tick = 0;
  let cpuStarted = false;
  step(`due at ${new Date(state.dueMs).toISOString().slice(11, 23)} — polling the posts table every 250 ms`);
  for (;;) {
    const now = Date.now();
    if (!cpuStarted && now >= state.dueMs) {
      cpuDrain0 = snapshot();
      cpuStarted = true;
      cpuSnaps.push({ wall: now, snap: cpuDrain0 });
    }
    if (cpuStarted && now - cpuSnaps.at(-1)!.wall >= 1000) cpuSnaps.push({ wall: now, snap: snapshot() });
    const r = (
      await bench.mon.query(
        `select count(*) filter (where status = 'published')::int as published, count(*) filter (where status = 'failed_to_publish')::int as failed from posts where project_id = any($1)`,
        [bench.s.projectIds],
      )
    ).rows[0];
    published = r.published;
    failed = r.failed;
    progress.push({ t: now, published });
    if (tick++ % 2 === 0) {
      const a = (
        await bench.mon.query<{ state: string | null; wait_event_type: string | null; n: number }>(
          `select state, wait_event_type, count(*)::int as n from pg_stat_activity where datname = $1 and backend_type = 'client backend' and pid <> pg_backend_pid() group by 1, 2`,
          [BENCH_DB],
        )
      ).rows;
      const sum = (f: (x: (typeof a)[number]) => boolean) => a.filter(f).reduce((acc, x) => acc + x.n, 0);
      activity.push({
        t: now,
        connections: sum(() => true),
        active: sum((x) => x.state === 'active'),
        idleInTx: sum((x) => x.state === 'idle in transaction'),
        lockWaits: sum((x) => x.wait_event_type === 'Lock'),
      });
    }
    if (now - lastPrint >= 5_000 && now >= state.dueMs - 1_000) {
      const w = state.workers[state.workers.length - 1]!;
      const rate = lastPrint ? ((published - lastPrintCount) * 1000) / (now - lastPrint) : 0;
      console.log(
        `    t=${s1(now - state.dueMs).padStart(6)} s  published ${f0(published).padStart(6)}/${f0(expected)}  ${f0(rate).padStart(5)}/s  failed ${failed}  worker #${w.index} ${w.exit ? 'dead' : `RSS ${mib(w.samples.at(-1)?.rssKiB ?? 0)}`}`,
      );
      lastPrint = now;
      lastPrintCount = published;
    }
    if (KILL && killedAt === null && now >= state.dueMs && (published >= KILL_AT * expected || now >= state.dueMs + KILL_FALLBACK_MS)) {
      // The steady-state CPU window ends here, with the worker still alive (a big process can
      // take a while to exit, and /proc forgets it once it has).
      const snap = snapshot();
      killedAt = Date.now();
      killSnap = { wall: killedAt, snap };
      cpuSnaps.push(killSnap);
      await state.w1.kill('SIGKILL');
      publishedAtKill = published;
      console.log(
        `    SIGKILL worker #1 at t=${s1(killedAt - state.dueMs)} s with ${f0(published)} published (${((published / expected) * 100).toFixed(1)}%); it was gone ${Date.now() - killedAt} ms later`,
      );
      restart = (async () => {
        await sleep(RESTART_DELAY_MS);
        w2 = await state.launch();
        await w2.waitReady(bench.connection, TASK_QUEUE);
        console.log(
          `    worker #${w2.index} pid ${w2.pid} started at t=${s1(w2.startedAt - state.dueMs)} s, polling at t=${s1(w2.readyAt! - state.dueMs)} s`,
        );
      })().catch((err) => {
        restartError = err;
      });
    }
    if (restartError) throw restartError;
    if (published + failed >= expected) break;
    if (now > lastDue + DEADLINE_MS) {
      console.log(`    deadline reached: ${expected - published - failed} posts still scheduled`);
      break;
    }
    await sleep(250);
  }
  const cpuDrain1 = snapshot();
  const drainEnd = Date.now();
  if (restart) await restart;
  return {
    expected,
    lastDue,
    pgGroups,
    createCpu,
    cpuDrain0,
    cpuSnaps,
    killSnap,
    progress,
    activity,
    killedAt,
    publishedAtKill,
    w2,
    published,
    cpuDrain1,
    drainEnd,
  };
}
