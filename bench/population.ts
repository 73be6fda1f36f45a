// Bench: the sleeping population (issue 36) — a month of posts scheduled through the API for
// many workspaces, sleeping in Temporal; what each costs (Temporal's store, the service's
// database, worker memory) against a bare one-timer workflow; every process stopped and started
// again; the posts due next measured against the same slice without a restart; then a tenth
// rescheduled and a hundredth unscheduled.
//
// Everything is the bench's own: database content_scheduler_bench_pop (dropped and recreated),
// Redis db 9 (flushed), the Temporal dev server on a SQLite file (or the cluster tier) and the
// network simulator on free ports; the worker and the API are child processes as production
// runs them. bench/README.md "population" says what the figures mean.

import path from 'node:path';
import pLimit from 'p-limit';
import pg from 'pg';
import { Cleanups } from './harness/cleanups';
import { postContent, prng } from './harness/content';
import { closeStores, resetStores, setPublishingEnvironment } from './harness/database';
import { diff, machineInfo, snapshot, waitForQuiet, type CpuSnapshot, type Groups } from './harness/proc';
import { WORKFLOW_TYPE } from './publishing/baseline';
import { buildWorkerBundles } from './publishing/bundles';
import { apiCreator, createAll, type CreateItem, type CreateResult } from './publishing/creation';
import { startWorker } from './publishing/worker';
import { planPosts, planWorkspaces, type PlannedPost, type PopulationPlan } from './population/plan';
import { rescheduleAll } from './population/reschedule';
import { report } from './population/report';
import * as S from './population/settings';
import {
  clusterTier,
  devServerTier,
  seedWorkspaces,
  ServiceProcesses,
  until,
  workerEnv,
  type SeededWorkspace,
  type TemporalTier,
} from './population/stack';
import { growth, postgresReading, temporalReading, type StorageGrowth } from './population/storage';
import { drain, readBack, type Expected } from './population/verify';
import { idle } from './harness/taskQueue';
import { freePort } from '../tooling/ports';
import { setTimeout as sleep } from 'node:timers/promises';
import { f0, REPO_ROOT, RESULTS_DIR, s1, step } from './harness/format';

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

async function main() {
  const cleanups = new Cleanups();
  process.once('SIGINT', () => void cleanups.run().then(() => process.exit(130)));
  try {
    const b = await setUp(cleanups);
    const bare = S.BASELINE ? await bareBaseline(b) : null;
    const population = await populate(b);
    const slices = await slicesAndRestart(b, population);
    const rescheduled = S.RESCHEDULE ? await rescheduleAll(b, population, slices) : null;
    const expected = new Map<string, Expected>();
    slices.idsA.forEach((id) => expected.set(id, { kind: 'A', notBeforeMs: slices.tA }));
    slices.idsB.forEach((id) => expected.set(id, { kind: 'B', notBeforeMs: slices.tB }));
    for (const [id, e] of rescheduled?.expected ?? []) expected.set(id, e);
    // Without the reschedule phase the C slice is left alone: due within the run like the others.
    if (!rescheduled) slices.idsC.forEach((id) => expected.set(id, { kind: 'C-moved', notBeforeMs: slices.tC }));
    const outcome = await readBack(b.mon, b.sim, expected, rescheduled?.unscheduled ?? new Set(), S.DRAIN_DEADLINE_MS);
    await report(b, { bare, population, slices, rescheduled, outcome });
  } finally {
    await cleanups.run();
    await closeStores();
  }
}

// ── Set up: the stores, Temporal, the simulator, the customers, the service ─────────────────

export type Bench = Awaited<ReturnType<typeof setUp>>;

async function setUp(cleanups: Cleanups) {
  const otherAtStart = S.QUIET_WAIT_MS > 0 ? await waitForQuiet({ waitMs: S.QUIET_WAIT_MS }) : null;
  const { freeClusterPorts } = await import('../tooling/temporalCluster');
  const clusterPorts = S.CLUSTER ? await freeClusterPorts() : null;
  const temporalPort = clusterPorts ? clusterPorts.frontend : await freePort();
  const simPort = await freePort();
  // lib/config reads the environment once, at import; the children inherit it.
  setPublishingEnvironment({ databaseUrl: S.DATABASE_URL, redisUrl: S.REDIS_URL, temporalPort, taskQueue: S.TASK_QUEUE, simPort });
  const startedAt = Date.now();
  const machine = machineInfo();
  const { config } = await import('../lib/config');
  console.log(`population bench — ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}`);
  console.log(
    `  ${f0(S.POSTS)} posts over ${f0(S.WORKSPACES)} workspaces, ${S.CONCURRENCY} requests in flight; Temporal ${S.CLUSTER ? 'cluster tier on Postgres' : 'dev server on a SQLite file'}; worker cache ${config.worker.maxCachedWorkflows} workflows (WORKER_MAX_CACHED_WORKFLOWS)`,
  );
  step(`database ${S.BENCH_DB} (reset + migrated), Redis ${S.REDIS_URL} (flushed)`);
  await resetStores(S.DATABASE_URL, S.REDIS_URL);

  const tier: TemporalTier = S.CLUSTER ? await clusterTier(clusterPorts!, S.DATABASE_URL) : await devServerTier(temporalPort);
  cleanups.push(() => tier.dispose());
  await tier.start();
  step(`Temporal ${S.CLUSTER ? 'cluster' : 'dev server'} at ${tier.address}, pids ${tier.pids().join(', ')}`);

  const { startNetworkSimulator } = await import('../sim/network/server');
  const simulator = await startNetworkSimulator({ port: simPort });
  cleanups.push(() => simulator.close());
  const sim = simulator.control;
  const { Connection, Client } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: tier.address });
  cleanups.push(() => connection.close());
  const client = new Client({ connection });
  const mon = new pg.Client({ connectionString: S.DATABASE_URL });
  await mon.connect();
  // A Postgres restarted under the bench ends the run with this, not with an unhandled event.
  mon.on('error', (err) => console.error(`population: monitoring connection lost: ${err.message}`));
  cleanups.push(() => mon.end());

  const workspaces = planWorkspaces(S.WORKSPACES);
  const t0 = Date.now();
  const seeded: SeededWorkspace[] = await seedWorkspaces(sim, workspaces, (n) => console.log(`    ${f0(n)} workspaces seeded`));
  const accounts = seeded.reduce((a, w) => a + w.projectIds.length, 0);
  step(`seeded ${f0(seeded.length)} workspaces with ${f0(accounts)} connected accounts and a write key each in ${s1(Date.now() - t0)} s`);
  const plan: PopulationPlan = planPosts(workspaces, S.POSTS, S.SLICE_SHARE, Date.now());

  const bundles = await buildWorkerBundles(RESULTS_DIR, 'population');
  const procs = new ServiceProcesses(workerEnv(bundles), RESULTS_DIR, S.TASK_QUEUE);
  cleanups.push(() => procs.stop());
  const ready = await procs.start(connection);
  step(`worker pid ${procs.worker.pid} polling after ${s1(ready.workerReadyMs)} s; API pid ${procs.api.pid} on :${procs.api.port}`);

  // Every account's connection-health workflow, as in production: the reconciler starts them on
  // its passes (a page at a time); the bench starts them at once through the reconciler's own
  // starter (lib/temporal/start/connectionHealth.ts), so the next pass finds them running.
  const { CONNECTION_HEALTH } = await import('../lib/temporal/contracts/connectionHealth');
  const { ensureHealthWorkflow } = await import('../lib/temporal/start/connectionHealth');
  const h0 = Date.now();
  const projects = seeded.flatMap((w) => w.projectIds.map((id) => ({ id, workspace_id: w.id })));
  await pLimit(S.CONCURRENCY).map(projects, (p) => ensureHealthWorkflow(client, p));
  const healthQuery = `WorkflowType = '${CONNECTION_HEALTH.type}' AND ExecutionStatus = 'Running'`;
  const healthy = await until(async () => (await client.workflow.count(healthQuery)).count >= accounts, 300_000, 2_000);
  await idle(connection, S.TASK_QUEUE, 300_000);
  const health = { workflows: (await client.workflow.count(healthQuery)).count, seconds: (Date.now() - h0) / 1000 };
  step(
    `${f0(health.workflows)}/${f0(accounts)} connection-health workflows running, each past its first check, after ${s1(Date.now() - h0)} s${healthy ? '' : ' — NOTE: not all of them'}`,
  );
  const restRssKiB = procs.rssKiB();

  const groups = async (): Promise<Groups> => {
    const { rows } = await mon.query<{ pid: number; datname: string | null; backend_type: string }>(
      'select pid, datname, backend_type from pg_stat_activity',
    );
    const temporalDbs = tier.store.kind === 'cluster' ? [tier.store.db.name, tier.store.db.visibilityName] : [];
    const ours = new Set([S.BENCH_DB, ...temporalDbs]);
    const foreign = new Set(rows.filter((r) => r.backend_type === 'client backend' && !ours.has(r.datname ?? '')).map((r) => r.pid));
    const workerPids = new Set(procs.workers.map((w) => w.pid));
    const apiPids = new Set(procs.apis.map((a) => a.pid));
    const temporalPids = new Set(tier.pids());
    return {
      worker: (p) => workerPids.has(p.pid),
      api: (p) => apiPids.has(p.pid),
      temporal: (p) => temporalPids.has(p.pid),
      postgres: (p) => p.comm === 'postgres' && !foreign.has(p.pid),
      'bench+sim': (p) => p.pid === process.pid,
    };
  };
  /** CPU µs per unit by process group between two snapshots, and the share other work took. */
  const cpuPer = async (a: CpuSnapshot, b: CpuSnapshot, units: number, extra: Groups = {}) => {
    const d = diff(a, b, { ...extra, ...(await groups()) });
    if (!d) return null;
    const wallMs = b.at - a.at;
    const usPerUnit = Object.fromEntries(Object.entries(d.cpuMs).map(([k, v]) => [k, Math.round((v * 1000) / Math.max(1, units))]));
    return { usPerUnit, machineBusy: d.machineBusy, otherShare: (d.cpuMs.other ?? 0) / (wallMs * machine.cpus) };
  };
  return {
    startedAt,
    machine,
    cleanups,
    otherAtStart,
    tier,
    sim,
    connection,
    client,
    mon,
    seeded,
    accounts,
    plan,
    bundles,
    procs,
    health,
    restRssKiB,
    cpuPer,
  };
}

const progress = (what: string, total: number) => {
  const every = Math.max(1000, Math.round(total / 10 / 1000) * 1000);
  const t0 = Date.now();
  return (n: number) => {
    if (n % every === 0) console.log(`    ${f0(n)}/${f0(total)} ${what} (${f0(n / ((Date.now() - t0) / 1000))}/s)`);
  };
};

// ── The bare baseline: N workflows, each sleeping on one timer to the same due times ───────

export type Bare = NonNullable<Awaited<ReturnType<typeof bareBaseline>>>;

async function bareBaseline(b: Bench) {
  const all: PlannedPost[] = [...b.plan.far, ...b.plan.sliceA, ...b.plan.sliceB, ...b.plan.sliceC];
  const before = await temporalReading(b.tier.store);
  const w = await startWorker(0, workerEnv(b.bundles, { BENCH_BASELINE_TASK_QUEUE: S.BASELINE_TASK_QUEUE }), {
    logDir: RESULTS_DIR,
    script: path.join(REPO_ROOT, 'bench', 'publishing', 'baselineWorker.ts'),
    logName: 'population-bare-worker.log',
    sampleMs: 1000,
  });
  await w.waitReady(b.connection, S.BASELINE_TASK_QUEUE);
  // The slices' bare twins sleep to a slot of the month like the rest (their posts' due times
  // are chosen later, and a bare workflow firing within the run would only add noise to it).
  const items = all.map((p, i) => ({ id: `bare-${i}`, dueMs: p.dueMs }));
  const cpu0 = snapshot();
  const startedAt = Date.now();
  const started: CreateResult = await createAll(
    items,
    async (it) => {
      await b.client.workflow.start(WORKFLOW_TYPE['bare-timer'], {
        taskQueue: S.BASELINE_TASK_QUEUE,
        workflowId: it.id,
        args: [{ dueMs: it.dueMs }],
      });
      return it.id;
    },
    S.CONCURRENCY,
    progress('bare workflows started', items.length),
  );
  const settled = await idle(b.connection, S.BASELINE_TASK_QUEUE, 600_000);
  // Armed: started and past its first task (its timer set), which the bare worker runs behind the starts.
  const armedRate = items.length / ((Date.now() - 2_000 - startedAt) / 1000);
  const cpu1 = snapshot();
  const after = await temporalReading(b.tier.store);
  const cpu = await b.cpuPer(cpu0, cpu1, items.length, { 'bare worker': (p) => p.pid === w.pid });
  const rssKiB = w.samples.at(-1)?.rssKiB ?? 0;
  await w.stop();
  const g: StorageGrowth = growth(before, after);
  const r = { workflows: items.length, started, armedRate, settled, storage: g, bytesPerWorkflow: g.bytes / items.length, cpu, rssKiB };
  step(
    `bare: ${f0(items.length - started.errors)} workflows started in ${s1(started.durationMs)} s (${f0(started.rate)}/s, p50 ${started.latencyMs.p50.toFixed(0)} ms, ${started.errors} errors), each asleep on its timer: ${f0(armedRate)}/s armed${settled ? '' : ' — NOTE: task queue not empty after 10 min'}; Temporal +${f0(r.bytesPerWorkflow)} B a workflow`,
  );
  return r;
}

// ── The population: the posts of the month, created through POST /v1/posts ────────────────

export type Population = Awaited<ReturnType<typeof populate>>;

async function populate(b: Bench) {
  const keyByProject = new Map<string, string>();
  const zoneByProject = new Map<string, string>();
  b.seeded.forEach((w, i) =>
    w.projectIds.forEach((p) => {
      keyByProject.set(p, w.apiKey);
      zoneByProject.set(p, b.plan.workspaces[i]!.timezone);
    }),
  );
  const rand = prng(20261129);
  const item = (p: PlannedPost, dueMs: number): CreateItem => ({
    projectId: b.seeded[p.workspace]!.projectIds[p.account]!,
    content: postContent(rand),
    scheduledFor: new Date(dueMs),
  });
  const items = b.plan.far.map((p) => item(p, p.dueMs));
  const t0 = await temporalReading(b.tier.store);
  const d0 = await postgresReading(S.DATABASE_URL);
  const creator = apiCreator(b.procs.api.port, (it) => keyByProject.get(it.projectId)!, S.CONCURRENCY);
  const cpu0 = snapshot();
  const peakFrom = b.procs.worker.samples.length;
  const created = await createAll(items, creator.create, S.CONCURRENCY, progress('posts created', items.length));
  const settled = await idle(b.connection, S.TASK_QUEUE, 600_000);
  const cpu1 = snapshot();
  creator.close();
  const cpu = await b.cpuPer(cpu0, cpu1, items.length);
  // The worker at rest with the population asleep: a few seconds for it to settle.
  await sleep(5_000);
  const rssKiB = b.procs.rssKiB();
  const peakRssKiB = Math.max(0, ...b.procs.worker.samples.slice(peakFrom).map((s) => s.rssKiB));
  const t1 = await temporalReading(b.tier.store);
  const d1 = await postgresReading(S.DATABASE_URL);
  const ok = items.length - created.errors;
  const unsynced = (
    await b.mon.query<{ n: number }>(`select count(*)::int as n from posts where workflow_synced_version < schedule_version`)
  ).rows[0]!.n;
  const temporal = growth(t0, t1);
  const service = growth(d0, d1);
  step(
    `population: ${f0(ok)} posts created through POST /v1/posts in ${s1(created.durationMs)} s (${f0(created.rate)}/s, p50 ${created.latencyMs.p50.toFixed(0)} ms / p99 ${created.latencyMs.p99.toFixed(0)} ms, ${created.errors} errors${created.errors ? `: ${created.errorSamples[0]?.slice(0, 120)}` : ''}); ${unsynced} not synced to Temporal${settled ? '' : '; NOTE: task queue not empty'}; per post Temporal +${f0(temporal.bytes / Math.max(1, ok))} B, service database +${f0(service.bytes / Math.max(1, ok))} B; worker RSS ${(rssKiB / 1024).toFixed(0)} MiB`,
  );
  const far = items
    .map((it, i) => ({ id: created.ids[i], projectId: it.projectId, zone: zoneByProject.get(it.projectId)! }))
    .filter((x): x is { id: string; projectId: string; zone: string } => !!x.id);
  return { created, ok, far, temporal, service, cpu, rssKiB, peakRssKiB, unsynced, keyByProject, item };
}

// ── The due slice, every process restarted between its halves ──────────────────────────────

export type Slices = Awaited<ReturnType<typeof slicesAndRestart>>;

async function slicesAndRestart(b: Bench, pop: Population) {
  const { sliceA, sliceB } = b.plan;
  const sliceC = S.RESCHEDULE ? b.plan.sliceC : [];
  const n = sliceA.length + sliceB.length + sliceC.length;
  // The first half falls due on the first whole minute after the slices can have been created.
  const estMs = (n / Math.max(1, pop.created.rate)) * 1000 * 1.5 + 45_000;
  const tA = Math.ceil((Date.now() + estMs) / 60_000) * 60_000;
  const tB = tA + S.RESTART_GAP_MS;
  const tC = tB + 2 * 60_000;
  const items = [...sliceA.map((p) => pop.item(p, tA)), ...sliceB.map((p) => pop.item(p, tB)), ...sliceC.map((p) => pop.item(p, tC))];
  const creator = apiCreator(b.procs.api.port, (it) => pop.keyByProject.get(it.projectId)!, S.CONCURRENCY);
  const created = await createAll(items, creator.create, S.CONCURRENCY);
  creator.close();
  const ids = created.ids;
  const idsA = ids.slice(0, sliceA.length).filter((x): x is string => !!x);
  const idsB = ids.slice(sliceA.length, sliceA.length + sliceB.length).filter((x): x is string => !!x);
  const cIds = ids
    .slice(sliceA.length + sliceB.length)
    .map((id, i) => ({ id, projectId: items[sliceA.length + sliceB.length + i]!.projectId }));
  const idsC = cIds.filter((x) => !!x.id).map((x) => x.id!);
  step(
    `due slice: ${f0(idsA.length)} posts due ${clock(tA)} (no restart), ${f0(idsB.length)} due ${clock(tB)} (${S.RESTART ? 'after every process is restarted' : 'no restart either'})${idsC.length ? `, ${f0(idsC.length)} due ${clock(tC)} for the reschedule checks` : ''}; created in ${s1(created.durationMs)} s, ${s1(tA - Date.now())} s before the first${created.errors ? ` — ${created.errors} errors: ${created.errorSamples[0]}` : ''}`,
  );
  await drain(b.mon, idsA, tA, `slice before the restart (due ${clock(tA)})`);

  let restart: {
    stopMs: number;
    temporalStartMs: number;
    workerReadyMs: number;
    apiReadyMs: number;
    totalMs: number;
    marginToBMs: number;
  } | null = null;
  if (S.RESTART) {
    const t0 = Date.now();
    await b.procs.stop();
    await b.tier.stop();
    const stopped = Date.now();
    step(`every process stopped (API, worker, Temporal) in ${s1(stopped - t0)} s; starting them again`);
    await b.tier.start();
    const temporalUp = Date.now();
    const ready = await b.procs.start(b.connection);
    const done = Date.now();
    restart = {
      stopMs: stopped - t0,
      temporalStartMs: temporalUp - stopped,
      workerReadyMs: ready.workerReadyMs,
      apiReadyMs: ready.apiReadyMs,
      totalMs: done - t0,
      marginToBMs: tB - done,
    };
    step(
      `restarted: Temporal up in ${s1(restart.temporalStartMs)} s, then the worker polling in ${s1(ready.workerReadyMs)} s and the API in ${s1(ready.apiReadyMs)} s; ${s1(restart.marginToBMs)} s before the second half is due${restart.marginToBMs < 0 ? ' — NOTE: the restart ran past it' : ''}`,
    );
  }
  await drain(b.mon, idsB, tB, `slice after the ${S.RESTART ? 'restart' : 'pause'} (due ${clock(tB)})`);
  return { tA, tB, tC, idsA, idsB, idsC, cIds, created, restart };
}

main()
  .then(() => process.exit(process.exitCode ?? 0))
  .catch((err) => {
    console.error(`population: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
