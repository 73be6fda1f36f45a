// Bench: a burst of AI post generations — N × POST /v1/posts/generations sent at once with the
// built-in writer — measured through the API: how fast the API accepts them, and how long each
// job takes from QUEUED to DONE (createdAt → completedAt of GET /v1/jobs). Before the service's
// rounds (or interleaved with them), the same bursts go to a minimal bare baseline on the same
// Temporal dev server (one INSERT and one workflow start per request; one activity doing one
// UPDATE per workflow); just before each service round, to a second bare baseline replaying the
// statements of one service job captured in this run, in the service's workflow shape. So the
// figures read as two ratios: what the service adds around its statements, and what its
// statements and workflow shape cost over the least Temporal can do on this machine in this run.
//
// Everything is the bench's own: Postgres database content_scheduler_bench_gen (dropped and
// recreated), Redis db 11 (flushed), a Temporal dev server (in memory) on a free port, the REST
// API in a child process (bench/harness/serve-app.ts) and the worker as `workers/main.ts` in another,
// as production runs it; the baseline's server (bench/generation/serve-bare.ts) and worker
// (bench/generation/baselineWorker.ts) likewise. See bench/README.md.

import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import proto from '@temporalio/proto';
import { diff, machineInfo, snapshot, waitForQuiet, type Groups } from './harness/proc';
import { REPO_ROOT } from './harness/servers';
import { freePort } from '../tooling/ports';
import { resolveTemporalBinary, startTemporalDevServer } from '../tooling/temporalBinary';
import { Cleanups } from './harness/cleanups';
import { closeStores, resetStores, setPublishingEnvironment } from './harness/database';
import { benchFlags } from './harness/options';
import { bareRound, startBareBaseline, type BareBaseline } from './generation/baseline';
import { writeWorkflowBundle } from './publishing/bundles';
import { request, roundFigures, type Reply, type RoundResult } from './generation/figures';
import { setTimeout as sleep } from 'node:timers/promises';
import { f0, RESULTS_DIR, step } from './harness/format';
import { startService, captureOneJob, runRounds, report } from './generation/rounds';

export const opt = benchFlags(
  `generation: N generation requests at once, built-in writer, worker as a child process;
before them (or interleaved) the same bursts at a bare baseline on the same Temporal dev server.`,
  {
    requests: { default: 200, integer: true, help: 'requests sent at once per round' },
    rounds: {
      default: 3,
      integer: true,
      help: 'measured rounds, each on a fresh project (default 3); the baseline runs as many',
    },
    warmup: {
      default: 20,
      integer: true,
      help: 'requests of an unmeasured first burst (default 20), for the baseline too',
    },
    timeout: { default: 120, integer: true, arg: 'S', help: 'seconds a round may take to reach DONE for every job' },
    'quiet-wait': {
      default: 120,
      integer: true,
      arg: 'S',
      help: 'before each round, wait up to S seconds for other processes to use < 15%\nof the machine (default 120; 0 = do not wait)',
    },
    'no-baseline': {
      type: 'boolean',
      help: `skip both bare baselines. The minimal one: a bare accept server (Koa + pg +
        Temporal client; POST /jobs = one INSERT and one workflow start) and a worker
        with the service worker's settings and heap limit running one activity (one
        UPDATE) per workflow, both child processes. The same-statements one: after the
        service's warm-up, one job is sent alone and every pg statement its API request
        and its worker activities ran is captured (bench/generation/census.ts, loaded
        into both processes); the same bare server and worker then replay those
        statements per job (fresh ids) around one workflow start, in the service's
        workflow shape (a local activity, an activity, a local activity). The bench
        prints each baseline's p50 / service p50 and the service's accepted/s and drain
        rate as fractions of the baselines', and the lines
        \`API / same statements bare: 0.NN×\` (same-statements p50 / service p50) and
        \`same statements / minimal: N.NN×\` (same-statements p50 / minimal p50)`,
    },
    'baseline-order': {
      default: 'before',
      arg: 'before|interleaved',
      help: `of the minimal baseline. before (default): its warm-up and rounds, then its
        processes stop and the service's start; interleaved: both sides up for the
        whole run, baseline round i just before service round i (a neighbour's load
        that comes and goes falls on both alike), at twice the database connections
        (both sides' pools; each process's pool is 12 unless DB_POOL_MAX is set, to
        stay within Postgres' default 100 sessions). The same-statements baseline needs the service's capture,
        so its round i always runs just before service round i`,
    },
    strict: {
      type: 'boolean',
      help: 'exit 1 when the median queue→done p50 misses the target (≤ 1,000 ms, issue 19;\nabsolute, whatever the baseline)',
    },
    profile: {
      type: 'boolean',
      help: `run the API and the worker with the V8 CPU profiler and print where their time
        went (the profiles cover each process's whole life: start, warm-up and rounds);
        files in bench/results/profiles/generation`,
    },
  },
  `CPU seconds per round by process: api and worker are the round's side (in a baseline round the
bare server and the baseline worker); idle is the other sides' processes that are up.
After the rounds the bench prints the service's statements per job by process and activity
(the census counts every statement of the measured rounds; the bench polls the jobs table itself).
Both workers load workflow bundles the bench builds before starting them (as production workers
load the build's), not webpack at start-up.

Environment: BENCH_GEN_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_gen),
             BENCH_GEN_REDIS_URL (default redis://127.0.0.1:6379/11; the database is flushed).`,
);

export const TIMEOUT_MS = opt.timeout * 1000;
const QUIET_WAIT_MS = opt['quiet-wait'] * 1000;
export const TARGET_P50_MS = 1_000;
export const BASELINE = !opt['no-baseline'];
export const ORDER = opt['baseline-order'];
if (ORDER !== 'before' && ORDER !== 'interleaved') {
  console.error(`--baseline-order must be before or interleaved, not ${ORDER}`);
  process.exit(2);
}

const DATABASE_URL = process.env.BENCH_GEN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_gen';
const REDIS_URL = process.env.BENCH_GEN_REDIS_URL ?? 'redis://127.0.0.1:6379/11';
export const TASK_QUEUE = 'bench-generation';
export { RESULTS_DIR };
export const PROFILE_DIR = path.join(RESULTS_DIR, 'profiles', 'generation');
export const CENSUS_DIR = path.join(RESULTS_DIR, 'generation-census');
// The census loads after tsx (TypeScript) and before the app, in each process's main thread only
// (the worker's workflow threads inherit its options and run no SQL): `--import tsx` twice is one import.
const CENSUS_URL = pathToFileURL(path.join(REPO_ROOT, 'bench', 'generation', 'census.ts')).href;
export const CENSUS_ARGS = [
  '--import',
  'tsx',
  '--import',
  `data:text/javascript,import { isMainThread } from 'node:worker_threads'; if (isMainThread) await import(${JSON.stringify(CENSUS_URL)});`,
];

// lib/config reads the environment at import: everything is set before the first app module
// loads, and both children inherit it. The worker builds a network client at start; nothing here
// publishes, so it is never called. The built-in writer: the figures measure the service, not a
// model's latency.
const temporalPort = await freePort();
setPublishingEnvironment(
  { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL, temporalPort, taskQueue: TASK_QUEUE, simPort: 9 },
  {
    BENCH_GEN_CENSUS_DIR: CENSUS_DIR,
    LLM_WRITER: 'builtin',
    // Interleaved, the three sides are up at once: six processes with the default pool of 20
    // would ask for more sessions than Postgres' default max_connections (100). Each gets 12
    // unless DB_POOL_MAX says otherwise; every side alike, so the ratios compare like with like.
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

export async function round(
  agent: http.Agent,
  baseUrl: string,
  key: string,
  projectId: string,
  n: number,
  groups: Groups,
): Promise<RoundResult> {
  const cpuBefore = snapshot();
  const t0 = performance.now();
  const replies = await Promise.all(
    Array.from({ length: n }, (_, i) => request(agent, baseUrl, key, 'POST', '/v1/posts/generations', { projectId, ...body(i) })),
  );
  const ids = new Set(replies.filter((r) => r.status === 200).map((r) => r.body.data.id as string));

  // Wait for every accepted job to be final the way the baseline waits for its rows: one count
  // on the jobs table every 100 ms. Polling GET /v1/jobs instead (200 jobs a page, ten times a
  // second) spent the API's and Postgres' CPU on the bench, beside the jobs it measures; the
  // figures themselves are read through the API once, when the round is over.
  const { db } = await import('../lib/db');
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const row = (await db()('jobs')
      .whereIn('id', [...ids])
      .whereIn('status', ['DONE', 'FAILED', 'CANCELLED'])
      .count('* as n')
      .first()) as { n: string | number };
    const final = Number(row.n);
    if (final >= ids.size) break;
    if (Date.now() > deadline) throw new Error(`only ${final}/${ids.size} jobs final after ${TIMEOUT_MS / 1000} s`);
    await sleep(100);
  }
  const cpu = diff(cpuBefore, snapshot(), groups);
  const jobs: any[] = [];
  let cursor: string | null = null;
  do {
    const page: Reply = await request(
      agent,
      baseUrl,
      key,
      'GET',
      `/v1/jobs?projectId=${projectId}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    if (page.status !== 200) throw new Error(`GET /v1/jobs answered ${page.status}: ${JSON.stringify(page.body)}`);
    jobs.push(...page.body.data.filter((j: any) => ids.has(j.id)));
    cursor = page.body.pagination.next_cursor;
  } while (cursor);
  if (jobs.length !== ids.size) throw new Error(`GET /v1/jobs listed ${jobs.length} of the round's ${ids.size} jobs`);
  const drafts = Number((await db()('posts').where({ project_id: projectId }).count('* as n').first())!.n);
  return roundFigures({
    requests: n,
    replies,
    t0,
    jobs: jobs.map((j) => ({ createdAt: Date.parse(j.createdAt), completedAt: j.status === 'DONE' ? Date.parse(j.completedAt) : null })),
    drafts,
    cpu,
  });
}

export const body = (i: number) => ({ source: { type: 'text', text: `${SOURCE} (#${i})` } });

/** One burst at a bare baseline, the same bodies as the service's (less the project id). */
async function baselineRound(b: BareBaseline, agent: http.Agent, n: number, groups: Groups): Promise<RoundResult> {
  const cpuBefore = snapshot();
  const { replies, t0, jobs } = await bareRound(b, agent, DATABASE_URL, n, body, TIMEOUT_MS);
  const first = replies.find((r) => r.status === 200);
  if (first) lastJobOf.set(b.table === 'jobs' ? 'same statements' : 'minimal', first.body.data.id as string);
  return roundFigures({ requests: n, replies, t0, jobs, drafts: null, cpu: diff(cpuBefore, snapshot(), groups) });
}

/** A job of each baseline's latest round (its workflow id) by baseline, whose history the bench reads. */
export const lastJobOf = new Map<string, string>();

/**
 * What Temporal recorded for one job: its history's events, workflow tasks, activity tasks,
 * markers (local activities, patches) and search-attribute upserts.
 */
export async function historyShape(workflowId: string): Promise<string> {
  const { Client, Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    const count = (name: string) =>
      (history.events ?? []).filter((e) => proto.temporal.api.enums.v1.EventType[e.eventType!] === `EVENT_TYPE_${name}`).length;
    return (
      `${history.events?.length ?? 0} events: ${count('WORKFLOW_TASK_STARTED')} workflow tasks, ${count('ACTIVITY_TASK_STARTED')} activity tasks,` +
      ` ${count('MARKER_RECORDED')} markers, ${count('UPSERT_WORKFLOW_SEARCH_ATTRIBUTES')} search-attribute upserts`
    );
  } catch (err) {
    // A diagnostic: the figures do not depend on it.
    return `(history not read: ${err instanceof Error ? err.message : String(err)})`;
  } finally {
    await connection.close();
  }
}

const CPUS = machineInfo().cpus;

export function printRound(label: string, r: RoundResult) {
  const refused =
    Object.entries(r.refused)
      .map(([k, v]) => `${v}× ${k}`)
      .join(', ') || 'none';
  console.log(
    `  ${label}: ${r.accepted}/${r.requests} accepted in ${f0(r.burstMs)} ms → ${r.acceptedPerSecond.toFixed(0)} accepted/s` +
      ` | answer p50 ${f0(r.acceptLatencyMs.p50)} ms, p99 ${f0(r.acceptLatencyMs.p99)} ms` +
      ` | queue→done p50 ${f0(r.queueToDoneMs.p50)} ms, p99 ${f0(r.queueToDoneMs.p99)} ms, max ${f0(r.queueToDoneMs.max)} ms` +
      ` | all done ${f0(r.lastDoneAfterMs)} ms after the first was queued (${r.drainPerSecond.toFixed(1)} jobs/s)` +
      ` | failed ${r.failed}${r.drafts === null ? '' : `, drafts ${r.drafts}`}, refused ${refused}`,
  );
  if (r.cpu) {
    const parts = Object.entries(r.cpu.cpuMs)
      .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}`)
      .join(', ');
    console.log(`    CPU seconds: ${parts} | machine busy ${(r.cpu.machineBusy * 100).toFixed(0)}% of ${CPUS} cores`);
  }
}

async function main() {
  const cleanups = new Cleanups();
  let results: Results;
  try {
    const bench = await setUp(cleanups);
    // Before: every minimal baseline round first, and its processes (and their database
    // connections) gone before the service's start.
    if (bench.bare && ORDER === 'before') {
      await baselineWarmup(bench, bench.bare, 'baseline');
      for (let i = 1; i <= opt.rounds; i++) await baselineRoundN(bench, bench.bare, 'baseline', bench.baselineResults, i);
      await bench.bare.stop();
      bench.bare = null;
    }
    const service = await startService(bench, cleanups);
    await captureOneJob(bench, service);
    await runRounds(bench, service);
    results = bench;
  } finally {
    await cleanups.run();
  }
  await report(results);
}

export type Bench = Awaited<ReturnType<typeof setUp>>;
export type Service = Awaited<ReturnType<typeof startService>>;
export type Results = Pick<Bench, 'results' | 'baselineResults' | 'sameResults'>;

/**
 * The stores, the Temporal dev server, the workflow bundles, the customer and, unless
 * --no-baseline, the minimal bare baseline's processes; the processes of each side that is up,
 * for the CPU groups of a round.
 */
async function setUp(cleanups: Cleanups) {
  step(`database ${DATABASE_URL} (recreated), Redis ${REDIS_URL} (flushed)`);
  await resetStores(DATABASE_URL, REDIS_URL);

  step('Temporal dev server');
  const binary = await resolveTemporalBinary({ log: (l) => console.log(`  [temporal] ${l}`) });
  const temporal = await startTemporalDevServer({ binary, port: temporalPort, uiPort: null, dbFile: null, log: () => {} });
  cleanups.push(() => temporal.stop());
  cleanups.push(closeStores);

  // Both workers load a bundle built here once, as production workers load the build's
  // (WORKFLOW_BUNDLE_PATH), rather than running webpack at start-up in their own heap.
  const tb = Date.now();
  process.env.WORKFLOW_BUNDLE_PATH = await writeWorkflowBundle(path.join(RESULTS_DIR, 'generation-workflow-bundle.js'));
  const baselineBundle = BASELINE
    ? await writeWorkflowBundle(
        path.join(RESULTS_DIR, 'generation-baseline-bundle.js'),
        path.join(import.meta.dirname, 'generation', 'baselineWorkflows.ts'),
      )
    : null;
  step(`workflow bundles built in ${((Date.now() - tb) / 1000).toFixed(1)} s; the workers load them`);

  // ── The service and the bare baseline, same dev server, same worker settings ────────────
  const { db } = await import('../lib/db');
  const { createWorkspace, issueApiKey } = await import('../admin/provision');
  const workspace = await createWorkspace({ name: 'Generation Bench Co', plan: 'BUSINESS' });
  // Caps high enough never to refuse, but set, so every request runs the conditional reservations.
  await db()('workspaces')
    .where({ id: workspace.id })
    .update({ daily_spend_cap_cents: 1_000_000_000, weekly_ai_budget_cents: 1_000_000_000 });
  const key = (await issueApiKey({ workspaceId: workspace.id, scopes: ['write'], name: 'generation bench' })).key;

  if (BASELINE)
    step(
      'minimal bare baseline: accept server (bench/generation/serve-bare.ts) and worker (bench/generation/baselineWorker.ts) as child processes',
    );
  const bench = {
    temporal,
    workspaceId: workspace.id as string,
    key,
    baselineBundle,
    bare: BASELINE ? await startBareBaseline({ env: process.env, logDir: RESULTS_DIR, bundlePath: baselineBundle }) : null,
    same: null as BareBaseline | null,
    // Same agent settings for the baseline's bursts and the service's.
    bareAgent: newAgent(),
    // The processes of the sides that are up but not in the round: their CPU shows as "idle".
    pids: { service: [] as number[], bare: [] as number[], same: [] as number[] },
    results: [] as RoundResult[],
    baselineResults: [] as RoundResult[],
    sameResults: [] as RoundResult[],
  };
  bench.pids.bare = bench.bare ? [bench.bare.server.pid, bench.bare.worker.pid] : [];
  cleanups.push(async () => {
    bench.bareAgent.destroy();
    const b = [bench.bare, bench.same];
    bench.bare = bench.same = null;
    for (const x of b) await x?.stop();
  });
  return bench;
}

export const newAgent = () => new http.Agent({ keepAlive: true, maxSockets: Math.max(opt.requests, opt.warmup, 1) });

/** A fresh project of the bench's workspace, for one round. */
export async function project(b: Bench, name: string): Promise<string> {
  const { createProject } = await import('../admin/provision');
  return (await createProject({ workspaceId: b.workspaceId, type: 'PERSONAL_BRAND', name, connection: 'none' })).id;
}

/** CPU groups of a round of the side whose processes are `pids` (API or bare server, then worker). */
export function sideGroups(b: Bench, pids: number[]): Groups {
  return {
    api: (p) => p.pid === pids[0],
    worker: (p) => p.pid === pids[1],
    temporal: (p) => p.pid === b.temporal.child.pid,
    postgres: (p) => p.comm.startsWith('postgres'),
    bench: (p) => p.pid === process.pid,
    idle: (p) => [...b.pids.service, ...b.pids.bare, ...b.pids.same].includes(p.pid) && !pids.includes(p.pid),
  };
}

export async function quiet(groups: Groups) {
  if (QUIET_WAIT_MS <= 0) return;
  const share = await waitForQuiet({ waitMs: QUIET_WAIT_MS, quietBelow: 0.15, groups: () => groups, announce: false });
  if (share >= 0.15) console.log(`  (other processes still use ${(share * 100).toFixed(0)}% of the machine; figures below are disturbed)`);
}

export async function baselineRoundN(b: Bench, bare: BareBaseline, name: string, into: RoundResult[], i: number) {
  const groups = sideGroups(b, [bare.server.pid, bare.worker.pid]);
  await quiet(groups);
  step(`${name} round ${i}: ${opt.requests} requests at once`);
  const r = await baselineRound(bare, b.bareAgent, opt.requests, groups);
  printRound(`${name} round ${i}`, r);
  into.push(r);
}

export async function baselineWarmup(b: Bench, bare: BareBaseline, name: string) {
  if (opt.warmup <= 0) return;
  step(`${name} warm-up: ${opt.warmup} requests`);
  printRound(`${name} warm-up`, await baselineRound(bare, b.bareAgent, opt.warmup, sideGroups(b, [bare.server.pid, bare.worker.pid])));
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
