// Bench: a burst of AI post generations through the API and the worker as child processes, beside
// the same bursts at two bare baselines on the same Temporal dev server (bench/README.md, generation).

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { diff, machineInfo, snapshot, waitForQuiet, type Groups } from './harness/proc';
import { startServer } from './harness/servers';
import { launch, workerPolls } from '../tooling/launcher';
import { Cleanups } from './harness/cleanups';
import { closeStores, resetStores, setPublishingEnvironment } from './harness/database';
import { benchFlags } from './harness/options';
import { REPO_ROOT, RESULTS_DIR, s1, step } from './harness/format';
import { reserveTemporal, startBenchTemporal } from './harness/temporal';
import { writeWorkflowBundle } from './harness/stack';
import { bareRound, burst, printRound, report, request, roundFigures, startBareBaseline } from './generation/baseline';
import type { JobTimes, RoundResult } from './generation/baseline';
import { censusControl, describePlan, planOf } from './generation/plan';

const opt = benchFlags(
  `generation: N generation requests at once, built-in writer, worker as a child process;
before them (or interleaved) the same bursts at a bare baseline on the same Temporal dev server.`,
  {
    requests: { default: 200, integer: true, help: 'requests sent at once per round' },
    rounds: { default: 3, integer: true, help: 'measured rounds, each on a fresh project; the baseline runs as many' },
    warmup: { default: 20, integer: true, help: 'requests of an unmeasured first burst, for the baseline too' },
    timeout: { default: 120, integer: true, arg: 'S', help: 'seconds a round may take to reach DONE for every job' },
    'quiet-wait': { default: 120, integer: true, arg: 'S', help: 'before each round, wait up to S s for other work < 15% (0: no wait)' },
    'no-baseline': { type: 'boolean', help: 'skip both bare baselines, minimal and same statements (bench/README.md, generation)' },
    'baseline-order': {
      default: 'before',
      arg: 'before|interleaved',
      help: "the minimal baseline's rounds before the service's, or each just before the service's\n(then pools of 12 unless DB_POOL_MAX is set)",
    },
    strict: { type: 'boolean', help: 'exit 1 when the median queue→done p50 misses the target (≤ 1,000 ms, issue 19)' },
    profile: { type: 'boolean', help: 'V8 CPU profiles of the API and worker (whole life), printed; in bench/results/profiles/generation' },
  },
  `CPU seconds per round by process: api and worker are the round's side (a baseline's bare server and worker);
idle is the other sides' processes that are up. Then the service's statements per job by process and activity.

Environment: BENCH_GEN_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_gen),
BENCH_GEN_REDIS_URL (default redis://127.0.0.1:6379/11, flushed).`,
);

const TIMEOUT_MS = opt.timeout * 1000;
const ORDER = opt['baseline-order'];
if (ORDER !== 'before' && ORDER !== 'interleaved') {
  console.error(`--baseline-order must be before or interleaved, not ${ORDER}`);
  process.exit(2);
}
const DATABASE_URL = process.env.BENCH_GEN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_gen';
const REDIS_URL = process.env.BENCH_GEN_REDIS_URL ?? 'redis://127.0.0.1:6379/11';
const TASK_QUEUE = 'bench-generation';
const PROFILE_DIR = path.join(RESULTS_DIR, 'profiles', 'generation');
const CENSUS_DIR = path.join(RESULTS_DIR, 'generation-census');
// The census loads after tsx and before the app, in each process's main thread only (the
// worker's workflow threads run no SQL): `--import tsx` twice is one import.
const CENSUS_URL = JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'bench', 'generation', 'census.ts')).href);
const CENSUS_IMPORT = `data:text/javascript,import { isMainThread } from 'node:worker_threads'; if (isMainThread) await import(${CENSUS_URL});`;

// Set before the first app module loads; both children inherit it. Nothing here publishes.
const reserved = await reserveTemporal('dev');
setPublishingEnvironment(
  { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL, temporalPort: reserved.port, taskQueue: TASK_QUEUE, simPort: 9 },
  {
    BENCH_GEN_CENSUS_DIR: CENSUS_DIR,
    LLM_WRITER: 'builtin',
    // Interleaved, every side is up at once: each process's pool is 12, within Postgres' default
    // max_connections (100), unless DB_POOL_MAX says otherwise.
    ...(ORDER === 'interleaved' && !process.env.DB_POOL_MAX ? { DB_POOL_MAX: '12' } : {}),
  },
);

const SOURCE = [
  'We moved our release checklist into the deployment pipeline this quarter.',
  'Every deploy now runs the same twelve checks, from schema drift to feature-flag hygiene.',
  'Rollbacks dropped by half, and on-call pages after releases fell from weekly to monthly.',
  'The lesson is simple: write the checklist down, then make the machine run it every time.',
  'Next we want the same discipline for incident reviews.',
].join(' ');
const body = (i: number) => ({ source: { type: 'text', text: `${SOURCE} (#${i})` } });

/** A side of the run: the service ('' for name), or a bare baseline, with its processes (api or bare server, then worker). */
type Side = { name: string; pids: number[]; results: RoundResult[]; round: Round; stop?: () => Promise<void> };
type Round = (n: number, groups: Groups, project: string) => Promise<RoundResult>;

// A failure ends the process, and the launcher's exit hook ends its children; the clean-ups are
// for the end of a run, before the report (the profiles are written as the processes end).
const cleanups = new Cleanups();
step(`database ${DATABASE_URL} (recreated), Redis ${REDIS_URL} (flushed)`);
await resetStores(DATABASE_URL, REDIS_URL);
step('Temporal dev server');
const log = (line: string) => console.log(`  [temporal] ${line}`);
const temporal = await startBenchTemporal(reserved, { databaseUrl: DATABASE_URL, databaseName: '', log });
cleanups.push(() => temporal.stop());
// Both workers load a bundle built here once, as production workers load the build's
// (WORKFLOW_BUNDLE_PATH), rather than running webpack at start-up in their own heap.
const tb = Date.now();
const bundle = (name: string, source?: string) => writeWorkflowBundle(path.join(RESULTS_DIR, `generation-${name}-bundle.js`), source);
process.env.WORKFLOW_BUNDLE_PATH = await bundle('workflow');
const baselineWorkflows = path.join(import.meta.dirname, 'generation', 'baselineWorkflows.ts');
const baselineBundle = opt['no-baseline'] ? null : await bundle('baseline', baselineWorkflows);
step(`workflow bundles built in ${s1(Date.now() - tb)} s; the workers load them`);

const { db } = await import('../lib/db');
const { temporalClient, closeTemporalClient } = await import('../lib/temporal/client');
cleanups.push(async () => void (await Promise.all([closeStores(), closeTemporalClient()])));
const { createWorkspace, createProject, issueApiKey } = await import('../admin/provision');
const workspace = await createWorkspace({ name: 'Generation Bench Co', plan: 'BUSINESS' });
// Caps high enough never to refuse, but set, so every request runs the conditional reservations.
await db()('workspaces').where({ id: workspace.id }).update({ daily_spend_cap_cents: 1e9, weekly_ai_budget_cents: 1e9 });
const key = (await issueApiKey({ workspaceId: workspace.id, scopes: ['write'], name: 'generation bench' })).key as string;
const newProject = async (name: string) =>
  (await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name, connection: 'none' })).id as string;
const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(opt.requests, opt.warmup, 1) });
const up: Side[] = [];
const lastJobOf = new Map<string, string>();
cleanups.push(async () => agent.destroy());
cleanups.push(async () => void (await Promise.all(up.map((s) => s.stop?.()))));

/** A bare baseline (`samePlan`: the same-statements one) up as a side: the same bodies as the service's (less the project id). */
async function addBaseline(name: string, samePlan?: string) {
  const bare = await startBareBaseline({ env: process.env, logDir: RESULTS_DIR, bundlePath: baselineBundle, samePlan });
  const round: Round = async (n, groups) => {
    const cpuBefore = snapshot();
    const { replies, t0, jobs } = await bareRound(bare, agent, n, body, TIMEOUT_MS);
    const first = replies.find((r) => r.status === 200);
    if (first) lastJobOf.set(samePlan ? 'same statements' : 'minimal', first.body.data.id as string);
    return roundFigures({ requests: n, replies, t0, jobs, drafts: null, cpu: diff(cpuBefore, snapshot(), groups) });
  };
  const side: Side = { name, pids: [bare.server.pid, bare.worker.pid], results: [], round, stop: () => bare.stop() };
  up.push(side);
  return side;
}

/**
 * One burst through the API: the round is over when every accepted job is final (one count on
 * the jobs table every 100 ms, as a baseline waits on its rows, not the API's CPU spent polling);
 * its figures are then read through GET /v1/jobs, once.
 */
async function serviceRound(baseUrl: string, projectId: string, n: number, groups: Groups): Promise<RoundResult> {
  const cpuBefore = snapshot();
  const send = (i: number) => request(agent, `${baseUrl}/v1/posts/generations`, key, 'POST', { projectId, ...body(i) });
  const final = async (ids: string[]) =>
    Number((await db()('jobs').whereIn('id', ids).whereIn('status', ['DONE', 'FAILED', 'CANCELLED']).count('* as n'))[0]!.n);
  const { replies, t0, ids } = await burst(send, n, final, TIMEOUT_MS);
  const cpu = diff(cpuBefore, snapshot(), groups);
  const jobs: JobTimes[] = [];
  for (let cursor: string | null = '', page; cursor !== null; cursor = page.body.pagination.next_cursor) {
    const query = `projectId=${projectId}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    page = await request(agent, `${baseUrl}/v1/jobs?${query}`, key, 'GET');
    if (page.status !== 200) throw new Error(`GET /v1/jobs answered ${page.status}: ${JSON.stringify(page.body)}`);
    for (const j of page.body.data.filter((j: any) => ids.includes(j.id)))
      jobs.push({ createdAt: Date.parse(j.createdAt), completedAt: j.status === 'DONE' ? Date.parse(j.completedAt) : null });
  }
  if (jobs.length !== ids.length) throw new Error(`GET /v1/jobs listed ${jobs.length} of the round's ${ids.length} jobs`);
  const drafts = Number((await db()('posts').where({ project_id: projectId }).count('* as n'))[0]!.n);
  return roundFigures({ requests: n, replies, t0, jobs, drafts, cpu });
}

/** The warm-up (`i` 0, unless --warmup 0) or measured round `i` of a side, printed; CPU group idle: the other sides' processes. */
async function measure(side: Side, i: number) {
  const n = i === 0 ? opt.warmup : opt.requests;
  if (i === 0 && n <= 0) return;
  const groups: Groups = {
    api: (p) => p.pid === side.pids[0],
    worker: (p) => p.pid === side.pids[1],
    temporal: (p) => temporal.pids().includes(p.pid),
    postgres: (p) => p.comm.startsWith('postgres'),
    bench: (p) => p.pid === process.pid,
    idle: (p) => up.some((s) => s !== side && s.pids.includes(p.pid)),
  };
  const label = `${side.name ? `${side.name} ` : ''}${i === 0 ? 'warm-up' : `round ${i}`}`;
  if (i > 0 && opt['quiet-wait'] > 0) {
    const share = await waitForQuiet({ waitMs: opt['quiet-wait'] * 1000, quietBelow: 0.15, groups: () => groups, announce: false });
    if (share >= 0.15)
      console.log(`  (other processes still use ${(share * 100).toFixed(0)}% of the machine; figures below are disturbed)`);
  }
  step(`${label}: ${n} requests${i === 0 ? '' : ' at once'}`);
  const r = await side.round(n, groups, i === 0 ? 'Warm-up' : `Round ${i}`);
  printRound(label, r, machineInfo().cpus);
  if (i > 0) side.results.push(r);
}

/** What Temporal recorded for one job: events, workflow and activity tasks, markers, search-attribute upserts. */
async function historyShape(workflowId: string): Promise<string> {
  try {
    const events = (await (await temporalClient()).workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const count = (kind: string) => events.filter((e) => e[`${kind}EventAttributes` as keyof typeof e]).length;
    return (
      `${events.length} events: ${count('workflowTaskStarted')} workflow tasks, ${count('activityTaskStarted')} activity tasks,` +
      ` ${count('markerRecorded')} markers, ${count('upsertWorkflowSearchAttributes')} search-attribute upserts`
    );
  } catch (err) {
    return `(history not read: ${err instanceof Error ? err.message : String(err)})`;
  }
}

if (!opt['no-baseline'])
  step(
    'minimal bare baseline: accept server (bench/generation/serve-bare.ts) and worker (bench/generation/baselineWorker.ts) as child processes',
  );
const bare = opt['no-baseline'] ? null : await addBaseline('baseline');
// Before: every minimal baseline round first, and its processes (and their database connections) gone before the service's start.
if (bare && ORDER === 'before') {
  for (let i = 0; i <= opt.rounds; i++) await measure(bare, i);
  await bare.stop!();
  up.splice(up.indexOf(bare), 1);
}

step('API (bench/harness/serve-app.ts) and worker (workers/main.ts) as child processes, with the statement census');
if (opt.profile) fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
// One folder per process: tsx's loader thread writes a profile of its own beside the main thread's.
const nodeArgs = (name: string) => [
  ...['--import', 'tsx', '--import', CENSUS_IMPORT],
  ...(opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(PROFILE_DIR, name)}`] : []),
];
const api = await startServer('api', 'bench/harness/serve-app.ts', process.env, nodeArgs('api'));
cleanups.push(() => api.stop());
const worker = await launch({ kind: 'worker', nodeArgs: nodeArgs('worker') });
cleanups.push(() => worker.stop());
const round: Round = async (n, groups, project) => serviceRound(api.baseUrl, await newProject(project), n, groups);
const service: Side = { name: '', pids: [api.pid, worker.pid], results: [], round };
up.push(service);
await worker.waitReady(workerPolls(TASK_QUEUE), 180_000);
const census = censusControl(CENSUS_DIR);
if (bare && ORDER === 'interleaved') await measure(bare, 0);
await measure(service, 0);

// One job alone, its statements captured in both processes: the same-statements plan, and its
// baseline started; then what Temporal recorded for one job of each side.
const projectId = await newProject('Capture');
await census.capture();
const one = await request(agent, `${api.baseUrl}/v1/posts/generations`, key, 'POST', { projectId, ...body(0) });
if (one.status !== 200) throw new Error(`the captured job was refused: ${one.status} ${JSON.stringify(one.body)}`);
const jobId = one.body.data.id as string;
for (let t = Date.now(); (await db()('jobs').where({ id: jobId }).first('status')).status !== 'DONE'; await sleep(50))
  if (Date.now() - t > TIMEOUT_MS) throw new Error(`the captured job did not finish; the worker's last output:\n${worker.tail.join('\n')}`);
await sleep(300);
const [apiDump, workerDump] = await census.dump(service.pids);
const plan = planOf(apiDump!, workerDump!, jobId);
const planFile = path.join(RESULTS_DIR, 'generation-same-statements.json');
fs.writeFileSync(planFile, JSON.stringify(plan));
step(`one job's statements (${path.relative(REPO_ROOT, planFile)}):\n${describePlan(plan)}`);
if (!opt['no-baseline']) step('same-statements bare baseline: the same bare server and worker replaying them');
const same = opt['no-baseline'] ? null : await addBaseline('same statements', planFile);
if (same) await measure(same, 0);
console.log(`  history of one job: service ${await historyShape(jobId)}`);
for (const [name, id] of lastJobOf) console.log(`  history of one job: ${name} ${await historyShape(id)}`);

// Interleaved: baseline round i, then service round i, so a neighbour's load that comes and goes falls on both sides alike.
const before = await census.dump(service.pids);
for (let i = 1; i <= opt.rounds; i++)
  for (const side of [ORDER === 'interleaved' ? bare : null, same, service]) if (side) await measure(side, i);
const after = await census.dump(service.pids);
['API', 'worker'].forEach((name, p) => {
  // Statements per job between the two dumps, by activity then text, largest first.
  const was = (activity: string, text: string) => before[p]!.counts[activity]?.[text] ?? 0;
  const rows = Object.entries(after[p]!.counts)
    .flatMap(([activity, texts]) =>
      Object.entries(texts).map(([text, n]) => ({ activity, text, perJob: (n - was(activity, text)) / (opt.requests * opt.rounds) })),
    )
    .filter((r) => r.perJob >= 0.05)
    .sort((x, y) => y.perJob - x.perJob);
  const total = rows.reduce((n, r) => n + r.perJob, 0);
  console.log(`\n${name}: ${total.toFixed(1)} statements per job over the rounds (those of 0.05 a job or more)`);
  for (const r of rows) console.log(`  ${r.perJob.toFixed(2).padStart(6)}  ${r.activity || '-'}  ${r.text.slice(0, 130)}`);
});

await cleanups.run();
const options = { requests: opt.requests, rounds: opt.rounds, warmup: opt.warmup, baseline: !opt['no-baseline'], baselineOrder: ORDER };
process.exit(report([service.results, bare?.results ?? [], same?.results ?? []], options, opt.strict, opt.profile ? PROFILE_DIR : null));
