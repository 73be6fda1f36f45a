// Bench: the sleeping population (issue 36) — what a month of posts asleep in Temporal costs
// against a bare one-timer workflow, and whether it survives a restart of every process
// (bench/README.md "population").

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import pg from 'pg';
import type { Cleanups } from './harness/cleanups';
import { postContent, prng, shuffle } from './harness/content';
import { f0, mapValues, RESULTS_DIR, s1, step } from './harness/format';
import { diff, machineInfo, postgresCpuGroup, snapshot, until, type CpuSnapshot, type Groups } from './harness/proc';
import { apiClient, apiCreator, buildWorkerBundles, createAll, reserveStack, runBench } from './harness/stack';
import { ServiceProcesses, startStack, startWorker, type CreateItem } from './harness/stack';
import { idle, type TemporalStore } from './harness/temporal';
import { WORKFLOW_TYPE } from './publishing/baseline';
import { drain, readBack, report, type Expected } from './population/report';
import * as S from './population/settings';

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
    const outcome = await readBack(b, slices.expected, rescheduled?.unscheduled ?? new Set());
    await report(b, { bare, population, slices, rescheduled, outcome });
  },
);

export type Bench = Awaited<ReturnType<typeof setUp>>;

async function setUp(cleanups: Cleanups) {
  const reserved = await reserveStack({
    quietWaitS: opt['quiet-wait'],
    kind: S.KIND,
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
  step(`database ${stack.db} (reset + migrated), Redis ${S.REDIS_URL} (flushed)`);
  step(`Temporal ${S.CLUSTER ? 'cluster' : 'dev server'} at ${tier.address}, pids ${tier.pids().join(', ')}`);

  const workspaces = S.planWorkspaces(opt.workspaces);
  const t0 = Date.now();
  const { connectedWorkspace } = await import('./harness/seed');
  let n = 0;
  const seeded = await pLimit(8).map(workspaces, async ({ index: i, accounts, timezone }) => {
    const person = (a: number) => ({ personId: `pop${i}x${a}`, name: `Person ${i}.${a}`, vanityName: `person-${i}-${a}`, timezone });
    const ws = await connectedWorkspace(sim, { name: `Population ${i}`, accounts, person, scopes: ['write'], keyName: 'population bench' });
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
  cleanups.push(() => procs.stop());
  /** The worker and the API started together (again after a restart): how long each took to be ready. */
  const startService = async () => {
    const t0 = Date.now();
    const api = procs.startApi().then(() => Date.now() - t0);
    await (await procs.startWorker()).waitReady(connection, S.TASK_QUEUE);
    return { workerReadyMs: Date.now() - t0, apiReadyMs: await api };
  };
  const ready = await startService();
  step(`worker pid ${procs.worker.pid} polling after ${s1(ready.workerReadyMs)} s; API pid ${procs.api.pid} on :${procs.api.port}`);

  // Every account's connection-health workflow, started at once through the reconciler's own starter, as its passes would.
  const { CONNECTION_HEALTH } = await import('../lib/temporal/contracts/connectionHealth');
  const { ensureHealthWorkflow } = await import('../lib/temporal/start/connectionHealth');
  const h0 = Date.now();
  const projects = seeded.flatMap((w) => w.projectIds.map((id) => ({ id, workspace_id: w.id })));
  await pLimit(opt.concurrency).map(projects, (p) => ensureHealthWorkflow(client, p));
  const running = async () =>
    (await client.workflow.count(`WorkflowType = '${CONNECTION_HEALTH.type}' AND ExecutionStatus = 'Running'`)).count;
  const healthy = await until(async () => (await running()) >= accounts, 300_000, 2_000);
  await idle(connection, S.TASK_QUEUE, 300_000);
  const health = { workflows: await running(), seconds: (Date.now() - h0) / 1000 };
  step(
    `${f0(health.workflows)}/${f0(accounts)} connection-health workflows running, each past its first check, after ${s1(Date.now() - h0)} s${healthy ? '' : ' — NOTE: not all of them'}`,
  );
  const restRssKiB = procs.rssKiB();

  /** CPU µs per unit by process group between two snapshots, and the share other work took. */
  const cpuPer = async (a: CpuSnapshot, z: CpuSnapshot, units: number, extra: Groups = {}) => {
    const of = (pids: number[]) => (p: { pid: number }) => pids.includes(p.pid);
    const d = diff(a, z, {
      ...extra,
      worker: of(procs.workers.map((w) => w.pid)),
      api: of(procs.apis.map((w) => w.pid)),
      temporal: of(tier.pids()),
      // Postgres backends of other databases than the bench's own are other work.
      postgres: await postgresCpuGroup(mon, [stack.db, ...tier.databases]),
      'bench+sim': of([process.pid]),
    });
    if (!d) return null;
    const usPerUnit = mapValues(d.cpuMs, (v) => Math.round((v * 1000) / Math.max(1, units)));
    return { usPerUnit, otherShare: (d.cpuMs.other ?? 0) / ((z.at - a.at) * machine.cpus) };
  };
  return { ...stack, env, tier, startedAt, seeded, accounts, plan, procs, startService, health, restRssKiB, cpuPer };
}

/** `create` over every item, then until `queue` is empty (false after 10 min): when it went empty, and the CPU µs per item. */
async function createAndSettle<T>(b: Bench, items: T[], create: (it: T) => Promise<string>, what: string, queue: string, extra?: Groups) {
  const cpu0 = snapshot();
  const t0 = Date.now();
  const every = Math.max(1000, Math.round(items.length / 10 / 1000) * 1000);
  const created = await createAll(items, create, opt.concurrency, (n) => {
    if (n % every === 0) console.log(`    ${f0(n)}/${f0(items.length)} ${what} (${f0(n / ((Date.now() - t0) / 1000))}/s)`);
  });
  const settled = await idle(b.connection, queue, 600_000);
  // idle answers once the queue has stayed empty for 2 s.
  const settledMs = Date.now() - 2_000 - t0;
  return { created, settled, settledMs, cpu: await b.cpuPer(cpu0, snapshot(), items.length, extra) };
}

export type Bare = NonNullable<Awaited<ReturnType<typeof bareBaseline>>>;

async function bareBaseline(b: Bench) {
  const grown = await storageMark(b.tier.store);
  const taskQueue = 'bench-population-bare';
  const env = { ...b.env, BENCH_BASELINE_TASK_QUEUE: taskQueue };
  const script = 'bench/publishing/baselineWorker.ts';
  const w = await startWorker(0, env, { logDir: RESULTS_DIR, script, logName: 'population-bare-worker.log', sampleMs: 1000 });
  await w.waitReady(b.connection, taskQueue);
  // The slices' bare twins sleep to a slot of the month too: one firing within the run would only add noise.
  const items = [...b.plan.far, ...b.plan.sliceA, ...b.plan.sliceB, ...b.plan.sliceC].map((p, i) => ({ id: `bare-${i}`, dueMs: p.dueMs }));
  const start = async ({ id, dueMs }: (typeof items)[number]) =>
    (await b.client.workflow.start(WORKFLOW_TYPE['bare-timer'], { taskQueue, workflowId: id, args: [{ dueMs }] })).workflowId;
  const run = await createAndSettle(b, items, start, 'bare workflows started', taskQueue, { 'bare worker': (p) => p.pid === w.pid });
  const { created: started, settled } = run;
  // Armed: started and past its first task (its timer set), which the bare worker runs behind the starts.
  const armedRate = items.length / (run.settledMs / 1000);
  const { temporal: storage } = await grown();
  const rssKiB = w.samples.at(-1)?.rssKiB ?? 0;
  await w.stop();
  const bytesPerWorkflow = storage.bytes / items.length;
  step(
    `bare: ${f0(items.length - started.errors)} workflows started in ${s1(started.durationMs)} s (${f0(started.rate)}/s, p50 ${started.latencyMs.p50.toFixed(0)} ms, ${started.errors} errors), each asleep on its timer: ${f0(armedRate)}/s armed${settled ? '' : ' — NOTE: task queue not empty after 10 min'}; Temporal +${f0(bytesPerWorkflow)} B a workflow`,
  );
  return { workflows: items.length, started, armedRate, settled, storage, bytesPerWorkflow, cpu: run.cpu, rssKiB };
}

export type Post = { id: string; projectId: string };
export type Population = Awaited<ReturnType<typeof populate>>;

/** The items created, with their post ids (those that failed left out). */
const withIds = (items: CreateItem[], ids: (string | null)[]): Post[] =>
  items.flatMap((it, i) => (ids[i] ? [{ id: ids[i], projectId: it.projectId }] : []));

async function populate(b: Bench) {
  // Each project's workspace key and zone.
  const project = new Map(b.seeded.flatMap((w, i) => w.projectIds.map((p) => [p, { key: w.key, zone: b.plan.workspaces[i]!.timezone }])));
  const rand = prng(20261129);
  const item = (p: S.PlannedPost, dueMs: number): CreateItem => ({
    projectId: b.seeded[p.workspace]!.projectIds[p.account]!,
    content: postContent(rand),
    scheduledFor: new Date(dueMs),
  });
  const creator = () => apiCreator(b.procs.api.port, (it) => project.get(it.projectId)!.key, opt.concurrency);
  const items = b.plan.far.map((p) => item(p, p.dueMs));
  const grown = await storageMark(b.tier.store);
  const peakFrom = b.procs.worker.samples.length;
  const api = creator();
  const run = await createAndSettle(b, items, api.create, 'posts created', S.TASK_QUEUE);
  api.close();
  // The worker at rest with the population asleep: a few seconds for it to settle.
  await sleep(5_000);
  const [rssKiB, peakRssKiB] = [b.procs.rssKiB(), b.procs.peakRssKiB(peakFrom)];
  const { temporal, service } = await grown();
  const c = run.created;
  const ok = items.length - c.errors;
  const unsynced = await b.mon.query<{ n: number }>(
    'select count(*)::int as n from posts where workflow_synced_version < schedule_version',
  );
  step(
    `population: ${f0(ok)} posts created through POST /v1/posts in ${s1(c.durationMs)} s (${f0(c.rate)}/s, p50 ${c.latencyMs.p50.toFixed(0)} ms / p99 ${c.latencyMs.p99.toFixed(0)} ms, ${c.errors} errors${c.errors ? `: ${c.errorSamples[0]?.slice(0, 120)}` : ''}); ${unsynced.rows[0]!.n} not synced to Temporal${run.settled ? '' : '; NOTE: task queue not empty'}; per post Temporal +${f0(temporal.bytes / Math.max(1, ok))} B, service database +${f0(service.bytes / Math.max(1, ok))} B; worker RSS ${(rssKiB / 1024).toFixed(0)} MiB`,
  );
  return { created: c, ok, far: withIds(items, c.ids), temporal, service, cpu: run.cpu, rssKiB, peakRssKiB, project, item, creator };
}

export type Slices = Awaited<ReturnType<typeof slicesAndRestart>>;

async function slicesAndRestart(b: Bench, pop: Population) {
  const { sliceA, sliceB } = b.plan;
  const sliceC = S.RESCHEDULE ? b.plan.sliceC : [];
  const [nA, nAB] = [sliceA.length, sliceA.length + sliceB.length];
  // The first half falls due on the first whole minute after the slices can have been created.
  const estMs = ((nAB + sliceC.length) / Math.max(1, pop.created.rate)) * 1000 * 1.5 + 45_000;
  const tA = Math.ceil((Date.now() + estMs) / 60_000) * 60_000;
  const tB = tA + opt['restart-gap'] * 60_000;
  const tC = tB + 2 * 60_000;
  const items = [...sliceA.map((p) => pop.item(p, tA)), ...sliceB.map((p) => pop.item(p, tB)), ...sliceC.map((p) => pop.item(p, tC))];
  const api = pop.creator();
  const made = await createAll(items, api.create, opt.concurrency);
  api.close();
  const part = (from: number, to?: number) => withIds(items.slice(from, to), made.ids.slice(from, to));
  const [idsA, idsB, c] = [part(0, nA).map((x) => x.id), part(nA, nAB).map((x) => x.id), part(nAB)];
  /** The posts due within the run, and when each may go out (the reschedule phase adds its own). */
  const expected = new Map<string, Expected>();
  idsA.forEach((id) => expected.set(id, { kind: 'A', notBeforeMs: tA }));
  idsB.forEach((id) => expected.set(id, { kind: 'B', notBeforeMs: tB }));
  step(
    `due slice: ${f0(idsA.length)} posts due ${clock(tA)} (no restart), ${f0(idsB.length)} due ${clock(tB)} (${S.RESTART ? 'after every process is restarted' : 'no restart either'})${c.length ? `, ${f0(c.length)} due ${clock(tC)} for the reschedule checks` : ''}; created in ${s1(made.durationMs)} s, ${s1(tA - Date.now())} s before the first${made.errors ? ` — ${made.errors} errors: ${made.errorSamples[0]}` : ''}`,
  );
  await drain(b.mon, idsA, tA, `slice before the restart (due ${clock(tA)})`);

  let restart = null;
  if (S.RESTART) {
    const t0 = Date.now();
    await b.procs.stop();
    await b.tier.stop();
    const stopMs = Date.now() - t0;
    step(`every process stopped (API, worker, Temporal) in ${s1(stopMs)} s; starting them again`);
    await b.tier.start();
    const temporalStartMs = Date.now() - t0 - stopMs;
    const ready = await b.startService();
    const totalMs = Date.now() - t0;
    restart = { stopMs, temporalStartMs, ...ready, totalMs, marginToBMs: tB - t0 - totalMs };
    step(
      `restarted: Temporal up in ${s1(temporalStartMs)} s, then the worker polling in ${s1(ready.workerReadyMs)} s and the API in ${s1(ready.apiReadyMs)} s; ${s1(restart.marginToBMs)} s before the second half is due${restart.marginToBMs < 0 ? ' — NOTE: the restart ran past it' : ''}`,
    );
  }
  await drain(b.mon, idsB, tB, `slice after the ${S.RESTART ? 'restart' : 'pause'} (due ${clock(tB)})`);
  return { tA, tB, tC, c, restart, expected };
}

export type RescheduleResult = Awaited<ReturnType<typeof rescheduleAll>>;

/** The changes; what each in-run change leaves to go out is added to `sl.expected`. */
async function rescheduleAll(b: Bench, pop: Population, sl: Slices) {
  const rand = prng(4242);
  const far = shuffle([...pop.far], rand);
  const half = Math.floor(sl.c.length / 2);
  const [cMoved, cUnscheduled] = [sl.c.slice(0, half), sl.c.slice(half)];
  const movedIn = far.slice(0, cMoved.length);
  let k = movedIn.length;
  const rFar = far.slice(k, (k += Math.max(0, Math.round(opt.posts * 0.1) - cMoved.length - movedIn.length)));
  const uFar = far.slice(k, (k += Math.max(0, Math.round(opt.posts * 0.01) - cUnscheduled.length)));
  const newInMs = sl.tC + 60_000;
  const newIn = new Date(newInMs).toISOString();

  const api = apiClient(b.procs.api.port, opt.concurrency);
  const patch = async (x: Post & { scheduledFor: string | null }) => {
    await api.send('PATCH', `/v1/posts/${x.id}`, pop.project.get(x.projectId)!.key, { scheduledFor: x.scheduledFor });
    return x.id;
  };
  const to = (scheduledFor: string | null) => (x: Post) => ({ ...x, scheduledFor });
  const grown = await storageMark(b.tier.store);
  const peakFrom = b.procs.worker.samples.length;

  // Those whose outcome shows within the run go first, so they are answered before the C slice is due.
  const inRunChanges = [...cMoved.map(to(newIn)), ...movedIn.map(to(newIn)), ...cUnscheduled.map(to(null))];
  const inRun = await createAll(inRunChanges, patch, opt.concurrency);
  const inRunBeforeDue = Date.now() < sl.tC;
  step(
    `in-run changes: ${cMoved.length} of the C slice moved to ${newIn.slice(11, 19)}, ${movedIn.length} far posts moved to the same minute, ${cUnscheduled.length} of the C slice unscheduled — answered ${s1(sl.tC - Date.now())} s before the C slice is due${inRun.errors ? `; ${inRun.errors} errors: ${inRun.errorSamples[0]}` : ''}`,
  );

  const cpu0 = snapshot();
  const every = Math.max(1000, Math.round(rFar.length / 5 / 1000) * 1000);
  const moves = rFar.map((x) => to(S.futureSlot(rand, pop.project.get(x.projectId)!.zone, Date.now()).toISOString())(x));
  const reschedules = await createAll(moves, patch, opt.concurrency, (n) => {
    if (n % every === 0) console.log(`    ${f0(n)}/${f0(rFar.length)} rescheduled`);
  });
  const unschedules = await createAll(uFar.map(to(null)), patch, opt.concurrency);
  api.close();
  await idle(b.connection, S.TASK_QUEUE, 600_000);
  const cpu = await b.cpuPer(cpu0, snapshot(), rFar.length + uFar.length);
  const [rssKiB, peakRssKiB] = [b.procs.rssKiB(), b.procs.peakRssKiB(peakFrom)];
  const { temporal, service } = await grown();
  step(
    `${reschedules.rate.toFixed(0)} reschedules/s (${rFar.length - reschedules.errors} of ${rFar.length}, p50 ${reschedules.latencyMs.p50.toFixed(0)} ms / p99 ${reschedules.latencyMs.p99.toFixed(0)} ms), ${unschedules.rate.toFixed(0)} unschedules/s (${uFar.length - unschedules.errors} of ${uFar.length}, p50 ${unschedules.latencyMs.p50.toFixed(0)} ms)${reschedules.errors + unschedules.errors ? ` — errors: ${[...reschedules.errorSamples, ...unschedules.errorSamples][0]}` : ''}`,
  );

  // What must and must not go out, from the PATCHes that were answered: a refused one left its post as it was.
  const unscheduled = new Set<string>();
  inRunChanges.forEach((ch, i) => {
    const [ok, isC] = [inRun.ids[i] !== null, i < cMoved.length || ch.scheduledFor === null];
    if (ok && ch.scheduledFor === null) unscheduled.add(ch.id);
    else if (ok || isC) sl.expected.set(ch.id, { kind: isC ? 'C-moved' : 'moved-in', notBeforeMs: ok ? newInMs : sl.tC });
  });
  uFar.forEach((x, i) => unschedules.ids[i] !== null && unscheduled.add(x.id));
  const dueNew = [...sl.expected].filter(([, e]) => e.notBeforeMs === newInMs).map(([id]) => id);
  await drain(b.mon, dueNew, newInMs, `rescheduled into the run (due ${newIn.slice(11, 19)})`);
  return { unscheduled, reschedules, unschedules, inRunBeforeDue, temporal, service, cpu, rssKiB, peakRssKiB };
}

// ── What the population occupies, by table: a phase's cost is the difference of two readings ──

const run = promisify(execFile);

/** Bytes the tables and indexes occupy, by name and in all, and the dev server's file on disk (main + WAL; null on Postgres). */
type StorageReading = { bytes: number; fileBytes: number | null; byName: Record<string, number> };

// SQLite's own accounting, through the sqlite3 shell on the live file: used pages (page_count −
// freelist_count) × page_size, and dbstat's bytes per table and index; beside it the raw file size, which never shrinks.
async function sqliteReading(file: string): Promise<StorageReading> {
  const sql = `select 'pages', (select page_count from pragma_page_count()) - (select freelist_count from pragma_freelist_count()), (select page_size from pragma_page_size());
select name, sum(pgsize) from dbstat group by name;`;
  // Read as immutable: no lock, so it never holds up the server's writes (in its rollback-journal mode a reader's
  // lock blocks a commit). A read that meets a page mid-write fails and is tried again.
  const read = (attempt: number): Promise<string> =>
    run('sqlite3', ['-separator', '\t', `file:${file}?immutable=1`, sql], { maxBuffer: 16 << 20 }).then(
      (r) => r.stdout,
      (err) => (attempt >= 8 ? Promise.reject(err) : sleep(1000).then(() => read(attempt + 1))),
    );
  const stdout = await read(0);
  const rows = stdout.split('\n').map((line) => line.split('\t'));
  const [, pages, pageSize] = rows.find(([name]) => name === 'pages') ?? [];
  const bytes = Number(pages) * Number(pageSize);
  if (!bytes) throw new Error(`sqlite3 read no page count from ${file}: ${stdout.slice(0, 200)}`);
  const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
  const byName = Object.fromEntries(rows.filter(([name]) => name && name !== 'pages').map(([name, b]) => [name, Number(b)]));
  return { bytes, fileBytes: size(file) + size(`${file}-wal`), byName };
}

const RELATION_SIZES = `select c.relname as name, pg_total_relation_size(c.oid)::bigint as bytes
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
 where c.relkind in ('r', 'm', 'p') and n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')`;

/** Tables of one Postgres database with their indexes and TOAST (pg_total_relation_size). */
async function postgresReading(db: string | pg.ClientConfig, prefix = ''): Promise<StorageReading> {
  const client = new pg.Client(db);
  await client.connect();
  const { rows } = await client.query<{ name: string; bytes: string }>(RELATION_SIZES).finally(() => client.end());
  const byName = Object.fromEntries(rows.map((r) => [prefix + r.name, Number(r.bytes)]));
  return { bytes: rows.reduce((a, r) => a + Number(r.bytes), 0), fileBytes: null, byName };
}

async function temporalReading(store: TemporalStore): Promise<StorageReading> {
  if (store.kind === 'dev') return sqliteReading(store.file!);
  const { name, visibilityName, ...server } = store.db;
  const main = await postgresReading({ ...server, database: name });
  const vis = await postgresReading({ ...server, database: visibilityName }, 'visibility.');
  return { bytes: main.bytes + vis.bytes, fileBytes: null, byName: { ...main.byName, ...vis.byName } };
}

export type StorageGrowth = ReturnType<typeof growth>;

/** From one reading to the next: bytes, file bytes, and the 8 tables and indexes that grew most, largest first. */
function growth(a: StorageReading, b: StorageReading) {
  const top = [...new Set([...Object.keys(a.byName), ...Object.keys(b.byName)])]
    .map((name) => ({ name, bytes: (b.byName[name] ?? 0) - (a.byName[name] ?? 0) }))
    .filter((x) => x.bytes !== 0)
    .sort((x, y) => y.bytes - x.bytes)
    .slice(0, 8);
  return { bytes: b.bytes - a.bytes, fileBytes: a.fileBytes !== null && b.fileBytes !== null ? b.fileBytes - a.fileBytes : null, top };
}

/** Temporal's store and the service database read now; the answer reads them again and says what each has grown since. */
async function storageMark(store: TemporalStore) {
  const [t0, d0] = [await temporalReading(store), await postgresReading(S.DATABASE_URL)];
  return async () => ({ temporal: growth(t0, await temporalReading(store)), service: growth(d0, await postgresReading(S.DATABASE_URL)) });
}
