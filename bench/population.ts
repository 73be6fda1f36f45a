// Bench: the sleeping population (issue 36) — what a month of posts asleep in Temporal costs
// against a bare one-timer workflow, and whether it survives a restart of every process
// (bench/README.md "population").

import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import type { Cleanups } from './harness/cleanups';
import { postContent, prng } from './harness/content';
import { f0, RESULTS_DIR, s1, step } from './harness/format';
import { diff, machineInfo, postgresCpuGroup, snapshot, until, type CpuSnapshot, type Groups } from './harness/proc';
import {
  apiCreator,
  buildWorkerBundles,
  createAll,
  reserveStack,
  runBench,
  ServiceProcesses,
  startStack,
  startWorker,
  type CreateItem,
} from './harness/stack';
import { idle } from './harness/temporal';
import { WORKFLOW_TYPE } from './publishing/baseline';
import { drain, readBack, rescheduleAll, type Expected } from './population/outcome';
import { report } from './population/report';
import * as S from './population/settings';
import { storageMark } from './population/storage';

const { opt } = S;
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

runBench(
  () => 'population',
  async (cleanups) => {
    const b = await setUp(cleanups);
    const bare = opt['no-baseline'] ? null : await bareBaseline(b);
    const population = await populate(b);
    const slices = await slicesAndRestart(b, population);
    const rescheduled = S.RESCHEDULE ? await rescheduleAll(b, population, slices) : null;
    const expected = new Map<string, Expected>();
    slices.idsA.forEach((id) => expected.set(id, { kind: 'A', notBeforeMs: slices.tA }));
    slices.idsB.forEach((id) => expected.set(id, { kind: 'B', notBeforeMs: slices.tB }));
    for (const [id, e] of rescheduled?.expected ?? []) expected.set(id, e);
    const outcome = await readBack(b.mon, b.sim, expected, rescheduled?.unscheduled ?? new Set());
    await report(b, { bare, population, slices, rescheduled, outcome });
  },
);

export type Bench = Awaited<ReturnType<typeof setUp>>;

async function setUp(cleanups: Cleanups) {
  const reserved = await reserveStack({
    quietWaitS: opt['quiet-wait'],
    kind: S.CLUSTER ? 'cluster' : 'dev',
    databaseUrl: S.DATABASE_URL,
    redisUrl: S.REDIS_URL,
    taskQueue: S.TASK_QUEUE,
    clusterDatabase: 'bench_pop_temporal',
    dbFile: true,
  });
  const startedAt = Date.now();
  const machine = machineInfo();
  const { config } = await import('../lib/config');
  console.log(`population bench — ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  console.log(
    `  ${f0(opt.posts)} posts over ${f0(opt.workspaces)} workspaces, ${opt.concurrency} requests in flight; Temporal ${S.CLUSTER ? 'cluster tier on Postgres' : 'dev server on a SQLite file'}; worker cache ${config.worker.maxCachedWorkflows} workflows (WORKER_MAX_CACHED_WORKFLOWS)`,
  );
  const stack = await startStack(reserved, cleanups);
  const { temporal: tier, sim, connection, client, mon } = stack;
  step(`database ${S.BENCH_DB} (reset + migrated), Redis ${S.REDIS_URL} (flushed)`);
  step(`Temporal ${S.CLUSTER ? 'cluster' : 'dev server'} at ${tier.address}, pids ${tier.pids().join(', ')}`);

  const workspaces = S.planWorkspaces(opt.workspaces);
  const t0 = Date.now();
  const { connectedWorkspace } = await import('./harness/seed');
  let n = 0;
  const seeded = await pLimit(8).map(workspaces, async (w) => {
    const ws = await connectedWorkspace(sim, {
      name: `Population ${w.index}`,
      accounts: w.accounts,
      person: (a) => ({
        personId: `pop${w.index}x${a}`,
        name: `Person ${w.index}.${a}`,
        vanityName: `person-${w.index}-${a}`,
        timezone: w.timezone,
      }),
      scopes: ['write'],
      keyName: 'population bench',
    });
    if (++n % 100 === 0) console.log(`    ${f0(n)} workspaces seeded`);
    return ws;
  });
  const accounts = seeded.reduce((a, w) => a + w.projectIds.length, 0);
  step(`seeded ${f0(seeded.length)} workspaces with ${f0(accounts)} connected accounts and a write key each in ${s1(Date.now() - t0)} s`);
  const plan = S.planPosts(workspaces, opt.posts, opt['slice-share'], Date.now());

  // Its workers load pre-built bundles, as production's do (bench/harness/stack.ts).
  const bundles = await buildWorkerBundles(RESULTS_DIR, 'population');
  const env = { WORKFLOW_BUNDLE_PATH: bundles.service, BENCH_BASELINE_BUNDLE_PATH: bundles.baseline };
  const procs = new ServiceProcesses({ name: 'population', env, sampleMs: 1000 });
  /** The worker and the API started together (again after a restart): how long each took to be ready. */
  const startService = async () => {
    const t0 = Date.now();
    const api = procs.startApi().then(() => Date.now() - t0);
    await (await procs.startWorker()).waitReady(connection, S.TASK_QUEUE);
    return { workerReadyMs: Date.now() - t0, apiReadyMs: await api };
  };
  cleanups.push(() => procs.stop());
  const ready = await startService();
  step(`worker pid ${procs.worker.pid} polling after ${s1(ready.workerReadyMs)} s; API pid ${procs.api.pid} on :${procs.api.port}`);

  // Every account's connection-health workflow, started at once through the reconciler's own starter, as its passes would.
  const { CONNECTION_HEALTH } = await import('../lib/temporal/contracts/connectionHealth');
  const { ensureHealthWorkflow } = await import('../lib/temporal/start/connectionHealth');
  const h0 = Date.now();
  const projects = seeded.flatMap((w) => w.projectIds.map((id) => ({ id, workspace_id: w.id })));
  await pLimit(opt.concurrency).map(projects, (p) => ensureHealthWorkflow(client, p));
  const healthQuery = `WorkflowType = '${CONNECTION_HEALTH.type}' AND ExecutionStatus = 'Running'`;
  const healthy = await until(async () => (await client.workflow.count(healthQuery)).count >= accounts, 300_000, 2_000);
  await idle(connection, S.TASK_QUEUE, 300_000);
  const health = { workflows: (await client.workflow.count(healthQuery)).count, seconds: (Date.now() - h0) / 1000 };
  step(
    `${f0(health.workflows)}/${f0(accounts)} connection-health workflows running, each past its first check, after ${s1(Date.now() - h0)} s${healthy ? '' : ' — NOTE: not all of them'}`,
  );
  const restRssKiB = procs.rssKiB();

  /** CPU µs per unit by process group between two snapshots, and the share other work took. */
  const cpuPer = async (a: CpuSnapshot, b: CpuSnapshot, units: number, extra: Groups = {}) => {
    // Postgres backends of other databases than the bench's own are other work.
    const postgres = await postgresCpuGroup(mon, [S.BENCH_DB, ...tier.databases]);
    const workerPids = new Set(procs.workers.map((w) => w.pid));
    const apiPids = new Set(procs.apis.map((w) => w.pid));
    const temporalPids = new Set(tier.pids());
    const d = diff(a, b, {
      ...extra,
      worker: (p) => workerPids.has(p.pid),
      api: (p) => apiPids.has(p.pid),
      temporal: (p) => temporalPids.has(p.pid),
      postgres,
      'bench+sim': (p) => p.pid === process.pid,
    });
    if (!d) return null;
    const usPerUnit = Object.fromEntries(Object.entries(d.cpuMs).map(([k, v]) => [k, Math.round((v * 1000) / Math.max(1, units))]));
    return { usPerUnit, otherShare: (d.cpuMs.other ?? 0) / ((b.at - a.at) * machine.cpus) };
  };
  return { ...stack, env, tier, startedAt, seeded, accounts, plan, procs, startService, health, restRssKiB, cpuPer };
}

const progress = (what: string, total: number) => {
  const every = Math.max(1000, Math.round(total / 10 / 1000) * 1000);
  const t0 = Date.now();
  return (n: number) => {
    if (n % every === 0) console.log(`    ${f0(n)}/${f0(total)} ${what} (${f0(n / ((Date.now() - t0) / 1000))}/s)`);
  };
};

/** `create` over every item, then until `taskQueue` is empty (false after 10 min): when it went empty, and the CPU µs per item. */
async function createAndSettle<T>(
  b: Bench,
  items: T[],
  create: (it: T) => Promise<string>,
  what: string,
  taskQueue: string,
  extra?: Groups,
) {
  const cpu0 = snapshot();
  const t0 = Date.now();
  const created = await createAll(items, create, opt.concurrency, progress(what, items.length));
  const settled = await idle(b.connection, taskQueue, 600_000);
  // idle answers once the queue has stayed empty for 2 s.
  const settledMs = Date.now() - 2_000 - t0;
  return { created, settled, settledMs, cpu: await b.cpuPer(cpu0, snapshot(), items.length, extra) };
}

export type Bare = NonNullable<Awaited<ReturnType<typeof bareBaseline>>>;

async function bareBaseline(b: Bench) {
  const mark = await storageMark(b.tier.store, S.DATABASE_URL);
  const taskQueue = S.BASELINE_TASK_QUEUE;
  const script = 'bench/publishing/baselineWorker.ts';
  const env = { ...b.env, BENCH_BASELINE_TASK_QUEUE: taskQueue };
  const w = await startWorker(0, env, { logDir: RESULTS_DIR, script, logName: 'population-bare-worker.log', sampleMs: 1000 });
  await w.waitReady(b.connection, taskQueue);
  // The slices' bare twins sleep to a slot of the month too: one firing within the run would only add noise.
  const items = [...b.plan.far, ...b.plan.sliceA, ...b.plan.sliceB, ...b.plan.sliceC].map((p, i) => ({ id: `bare-${i}`, dueMs: p.dueMs }));
  const start = async (it: (typeof items)[number]) => {
    await b.client.workflow.start(WORKFLOW_TYPE['bare-timer'], { taskQueue, workflowId: it.id, args: [{ dueMs: it.dueMs }] });
    return it.id;
  };
  const run = await createAndSettle(b, items, start, 'bare workflows started', taskQueue, { 'bare worker': (p) => p.pid === w.pid });
  const { created: started, settled } = run;
  // Armed: started and past its first task (its timer set), which the bare worker runs behind the starts.
  const armedRate = items.length / (run.settledMs / 1000);
  const { temporal: storage } = await mark.growth();
  const rssKiB = w.samples.at(-1)?.rssKiB ?? 0;
  await w.stop();
  const bytesPerWorkflow = storage.bytes / items.length;
  step(
    `bare: ${f0(items.length - started.errors)} workflows started in ${s1(started.durationMs)} s (${f0(started.rate)}/s, p50 ${started.latencyMs.p50.toFixed(0)} ms, ${started.errors} errors), each asleep on its timer: ${f0(armedRate)}/s armed${settled ? '' : ' — NOTE: task queue not empty after 10 min'}; Temporal +${f0(bytesPerWorkflow)} B a workflow`,
  );
  return { workflows: items.length, started, armedRate, settled, storage, bytesPerWorkflow, cpu: run.cpu, rssKiB };
}

export type Population = Awaited<ReturnType<typeof populate>>;

async function populate(b: Bench) {
  const keyByProject = new Map<string, string>();
  const zoneByProject = new Map<string, string>();
  b.seeded.forEach((w, i) =>
    w.projectIds.forEach((p) => {
      keyByProject.set(p, w.key);
      zoneByProject.set(p, b.plan.workspaces[i]!.timezone);
    }),
  );
  const rand = prng(20261129);
  const item = (p: S.PlannedPost, dueMs: number): CreateItem => ({
    projectId: b.seeded[p.workspace]!.projectIds[p.account]!,
    content: postContent(rand),
    scheduledFor: new Date(dueMs),
  });
  const creator = () => apiCreator(b.procs.api.port, (it) => keyByProject.get(it.projectId)!, opt.concurrency);
  const items = b.plan.far.map((p) => item(p, p.dueMs));
  const mark = await storageMark(b.tier.store, S.DATABASE_URL);
  const peakFrom = b.procs.worker.samples.length;
  const api = creator();
  const { created, settled, cpu } = await createAndSettle(b, items, api.create, 'posts created', S.TASK_QUEUE);
  api.close();
  // The worker at rest with the population asleep: a few seconds for it to settle.
  await sleep(5_000);
  const rssKiB = b.procs.rssKiB();
  const peakRssKiB = b.procs.peakRssKiB(peakFrom);
  const { temporal, service } = await mark.growth();
  const ok = items.length - created.errors;
  const unsynced = (
    await b.mon.query<{ n: number }>(`select count(*)::int as n from posts where workflow_synced_version < schedule_version`)
  ).rows[0]!.n;
  step(
    `population: ${f0(ok)} posts created through POST /v1/posts in ${s1(created.durationMs)} s (${f0(created.rate)}/s, p50 ${created.latencyMs.p50.toFixed(0)} ms / p99 ${created.latencyMs.p99.toFixed(0)} ms, ${created.errors} errors${created.errors ? `: ${created.errorSamples[0]?.slice(0, 120)}` : ''}); ${unsynced} not synced to Temporal${settled ? '' : '; NOTE: task queue not empty'}; per post Temporal +${f0(temporal.bytes / Math.max(1, ok))} B, service database +${f0(service.bytes / Math.max(1, ok))} B; worker RSS ${(rssKiB / 1024).toFixed(0)} MiB`,
  );
  const far = items
    .map((it, i) => ({ id: created.ids[i], projectId: it.projectId, zone: zoneByProject.get(it.projectId)! }))
    .filter((x): x is { id: string; projectId: string; zone: string } => !!x.id);
  return { created, ok, far, temporal, service, cpu, rssKiB, peakRssKiB, keyByProject, item, creator };
}

export type Slices = Awaited<ReturnType<typeof slicesAndRestart>>;

async function slicesAndRestart(b: Bench, pop: Population) {
  const { sliceA, sliceB } = b.plan;
  const sliceC = S.RESCHEDULE ? b.plan.sliceC : [];
  const n = sliceA.length + sliceB.length + sliceC.length;
  // The first half falls due on the first whole minute after the slices can have been created.
  const estMs = (n / Math.max(1, pop.created.rate)) * 1000 * 1.5 + 45_000;
  const tA = Math.ceil((Date.now() + estMs) / 60_000) * 60_000;
  const tB = tA + opt['restart-gap'] * 60_000;
  const tC = tB + 2 * 60_000;
  const items = [...sliceA.map((p) => pop.item(p, tA)), ...sliceB.map((p) => pop.item(p, tB)), ...sliceC.map((p) => pop.item(p, tC))];
  const api = pop.creator();
  const created = await createAll(items, api.create, opt.concurrency);
  api.close();
  const ids = created.ids.map((id, i) => ({ id, projectId: items[i]!.projectId }));
  const part = (from: number, to: number) => ids.slice(from, to).filter((x): x is { id: string; projectId: string } => !!x.id);
  const idsA = part(0, sliceA.length).map((x) => x.id);
  const idsB = part(sliceA.length, sliceA.length + sliceB.length).map((x) => x.id);
  const c = part(sliceA.length + sliceB.length, n);
  step(
    `due slice: ${f0(idsA.length)} posts due ${clock(tA)} (no restart), ${f0(idsB.length)} due ${clock(tB)} (${S.RESTART ? 'after every process is restarted' : 'no restart either'})${c.length ? `, ${f0(c.length)} due ${clock(tC)} for the reschedule checks` : ''}; created in ${s1(created.durationMs)} s, ${s1(tA - Date.now())} s before the first${created.errors ? ` — ${created.errors} errors: ${created.errorSamples[0]}` : ''}`,
  );
  await drain(b.mon, idsA, tA, `slice before the restart (due ${clock(tA)})`);

  let restart = null;
  if (S.RESTART) {
    const t0 = Date.now();
    await b.procs.stop();
    await b.tier.stop();
    const stopped = Date.now();
    step(`every process stopped (API, worker, Temporal) in ${s1(stopped - t0)} s; starting them again`);
    await b.tier.start();
    const temporalUp = Date.now();
    const ready = await b.startService();
    const done = Date.now();
    restart = { stopMs: stopped - t0, temporalStartMs: temporalUp - stopped, ...ready, totalMs: done - t0, marginToBMs: tB - done };
    step(
      `restarted: Temporal up in ${s1(restart.temporalStartMs)} s, then the worker polling in ${s1(ready.workerReadyMs)} s and the API in ${s1(ready.apiReadyMs)} s; ${s1(restart.marginToBMs)} s before the second half is due${restart.marginToBMs < 0 ? ' — NOTE: the restart ran past it' : ''}`,
    );
  }
  await drain(b.mon, idsB, tB, `slice after the ${S.RESTART ? 'restart' : 'pause'} (due ${clock(tB)})`);
  return { tA, tB, tC, idsA, idsB, c, restart };
}
