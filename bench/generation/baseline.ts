import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { launch, workerPolls } from '../../tooling/launcher';
import { f0, listEntries, quantile, REPO_ROOT, writeResults } from '../harness/format';
import { requestText, summarize } from '../harness/load';
import { machineInfo, until, type CpuBreakdown } from '../harness/proc';
import { printProfile, summarizeProfile } from '../harness/profile';
import { startServer } from '../harness/servers';
import type { Plan } from './plan';

// The generation bench's bursts and their figures, the service's and a bare baseline's alike (requests as answered, each job's queue→done
// from its row), and the bare baselines: a bare accept server (serve-bare.ts) and worker (baselineWorker.ts) replaying a plan
// (bench/README.md, generation).

export type Reply = { status: number; body: any; sentAt: number; answeredAt: number };

/** One request on the bench's agent to `url`; a JSON answer parsed. */
export async function request(agent: http.Agent, url: string, key: string, method: string, body?: unknown): Promise<Reply> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers = { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) };
  const sentAt = performance.now();
  const res = await requestText(agent, new URL(url), method, headers, payload);
  const json = res.headers['content-type']?.includes('json');
  return { status: res.status, sentAt, answeredAt: performance.now(), body: json ? JSON.parse(res.body) : res.body };
}

export type RoundResult = ReturnType<typeof roundFigures>;
export type JobTimes = { createdAt: number; completedAt: number | null };
type Burst = { requests: number; replies: Reply[]; t0: number; jobs: JobTimes[]; drafts: number | null; cpu: CpuBreakdown | null };

/** One burst's figures (`t0`: performance.now() at its start; `jobs` in epoch ms, completedAt null: not done; `drafts` null: baseline). */
export function roundFigures(input: Burst) {
  const { replies, jobs } = input;
  const accepted = replies.filter((r) => r.status === 200);
  const refusals = replies.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body?.error?.code ?? ''}`.trim());
  const burstMs = replies.length ? Math.max(...replies.map((r) => r.answeredAt)) - input.t0 : 0;
  const done = jobs.filter((j): j is { createdAt: number; completedAt: number } => j.completedAt !== null);
  const firstCreated = jobs.length ? Math.min(...jobs.map((j) => j.createdAt)) : 0;
  const lastDoneAfterMs = done.length ? Math.max(...done.map((j) => j.completedAt)) - firstCreated : 0;
  return {
    requests: input.requests,
    accepted: accepted.length,
    refused: Object.fromEntries([...new Set(refusals)].map((k) => [k, refusals.filter((r) => r === k).length])),
    burstMs,
    acceptedPerSecond: burstMs > 0 ? accepted.length / (burstMs / 1000) : 0,
    acceptLatencyMs: summarize(accepted.map((r) => r.answeredAt - r.sentAt)),
    queueToDoneMs: summarize(done.map((j) => j.completedAt - j.createdAt)),
    lastDoneAfterMs,
    /** Jobs done per second, from the first job queued to the last one done. */
    drainPerSecond: lastDoneAfterMs > 0 ? done.length / (lastDoneAfterMs / 1000) : 0,
    failed: jobs.length - done.length,
    drafts: input.drafts,
    cpu: input.cpu,
  };
}

export type Summary = ReturnType<typeof summarizeRounds>;

/** Each figure's median over the rounds (the lower middle one of an even count). */
export function summarizeRounds(results: RoundResult[]) {
  const med = (f: (r: RoundResult) => number) => quantile(results.map(f), 0.5) ?? 0;
  return {
    acceptedPerSecond: med((r) => r.acceptedPerSecond),
    answerP50Ms: med((r) => r.acceptLatencyMs.p50),
    queueToDoneP50Ms: med((r) => r.queueToDoneMs.p50),
    queueToDoneP99Ms: med((r) => r.queueToDoneMs.p99),
    drainPerSecond: med((r) => r.drainPerSecond),
  };
}

const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? a / b : null);

/** Baseline p50 / service p50 (1 = as quick as the baseline), the service's accepted/s and drain as fractions of the baseline's. */
export function compareToBaseline(service: Summary, baseline: Summary) {
  return {
    queueToDoneP50Ratio: ratio(baseline.queueToDoneP50Ms, service.queueToDoneP50Ms),
    acceptedPerSecondShare: ratio(service.acceptedPerSecond, baseline.acceptedPerSecond),
    drainShare: ratio(service.drainPerSecond, baseline.drainPerSecond),
  };
}

export function printRound(label: string, r: RoundResult, cpus: number) {
  console.log(
    `  ${label}: ${r.accepted}/${r.requests} accepted in ${f0(r.burstMs)} ms → ${r.acceptedPerSecond.toFixed(0)} accepted/s` +
      ` | answer p50 ${f0(r.acceptLatencyMs.p50)} ms, p99 ${f0(r.acceptLatencyMs.p99)} ms` +
      ` | queue→done p50 ${f0(r.queueToDoneMs.p50)} ms, p99 ${f0(r.queueToDoneMs.p99)} ms, max ${f0(r.queueToDoneMs.max)} ms` +
      ` | all done ${f0(r.lastDoneAfterMs)} ms after the first was queued (${r.drainPerSecond.toFixed(1)} jobs/s)` +
      ` | failed ${r.failed}${r.drafts === null ? '' : `, drafts ${r.drafts}`}, refused ${listEntries(r.refused, (k, v) => `${v}× ${k}`) || 'none'}`,
  );
  if (r.cpu)
    console.log(
      `    CPU seconds: ${listEntries(r.cpu.cpuMs, (k, v) => `${k} ${(v / 1000).toFixed(1)}`)} | machine busy ${(r.cpu.machineBusy * 100).toFixed(0)}% of ${cpus} cores`,
    );
}

/** The target stays absolute (issue 19): queue→done p50 of the burst, whatever the baselines. */
const TARGET_P50_MS = 1_000;
type Sides = [RoundResult[], RoundResult[], RoundResult[]];
type Options = { requests: number; rounds: number; warmup: number; baseline: boolean; baselineOrder: string };

/** The medians against each baseline, the lines scripts read, generation.json, the profiles; the exit code. */
export function report([results, baselineResults, sameResults]: Sides, options: Options, strict: boolean, profileDir: string | null) {
  const summary = summarizeRounds(results);
  const line = (s: Summary) =>
    `${s.acceptedPerSecond.toFixed(0)} accepted/s, answer p50 ${f0(s.answerP50Ms)} ms, queue→done p50 ${f0(s.queueToDoneP50Ms)} ms, p99 ${f0(s.queueToDoneP99Ms)} ms, drain ${s.drainPerSecond.toFixed(1)} jobs/s`;
  console.log(`\nmedian of ${results.length} rounds: ${line(summary)}`);
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(0)}%`);
  const against = (name: string, rounds: RoundResult[]) => {
    if (!rounds.length) return null;
    const base = summarizeRounds(rounds);
    const v = compareToBaseline(summary, base);
    console.log(`${name}, median of ${rounds.length} rounds: ${line(base)}`);
    console.log(
      `vs the ${name} of this run: queue→done p50 ${f0(summary.queueToDoneP50Ms)} ms (service) vs ${f0(base.queueToDoneP50Ms)} ms (baseline),` +
        ` ratio baseline/service ${v.queueToDoneP50Ratio === null ? 'n/a' : v.queueToDoneP50Ratio.toFixed(2)}` +
        ` | accepted/s ${pct(v.acceptedPerSecondShare)} of the baseline's | drain ${pct(v.drainShare)} of the baseline's`,
    );
    return { summary: base, rounds, versus: v };
  };
  const minimal = against('minimal bare baseline', baselineResults);
  const same = against('same-statements bare baseline', sameResults);
  // On lines a script can read, as the read surfaces' benches print them (bench/harness/statements.ts).
  const tag = `generation [${options.requests} at once]`;
  if (same?.versus.queueToDoneP50Ratio != null)
    console.log(`  ${tag}: API / same statements bare: ${same.versus.queueToDoneP50Ratio.toFixed(2)}×`);
  if (same && minimal && minimal.summary.queueToDoneP50Ms > 0)
    console.log(`  ${tag}: same statements / minimal: ${(same.summary.queueToDoneP50Ms / minimal.summary.queueToDoneP50Ms).toFixed(2)}×`);
  const file = writeResults('generation', {
    at: new Date().toISOString(),
    machine: machineInfo(),
    options,
    summary,
    rounds: results,
    baseline: minimal && { summary: minimal.summary, rounds: baselineResults },
    vsBaseline: minimal?.versus ?? null,
    sameStatements: same && { summary: same.summary, rounds: sameResults },
    vsSameStatements: same?.versus ?? null,
  });
  for (const name of profileDir ? ['api', 'worker'] : []) {
    const dir = path.join(profileDir!, name);
    const jobs = options.warmup + options.requests * options.rounds;
    // The main thread's profile is the largest (the loader thread's only covers imports).
    const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
    const main = files.map((f) => path.join(dir, f)).sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0];
    if (main) printProfile(`${name} (per job: ${jobs} jobs)`, summarizeProfile(main, REPO_ROOT, 25), jobs);
    else console.log(`no profile of the ${name} in ${dir}`);
  }
  const targetMet = summary.queueToDoneP50Ms <= TARGET_P50_MS;
  console.log(`target: queue→done p50 ≤ ${f0(TARGET_P50_MS)} ms: ${targetMet ? 'met' : 'MISSED'} (${f0(summary.queueToDoneP50Ms)} ms)`);
  console.log(`results: ${path.relative(REPO_ROOT, file)}`);
  const whole = (r: RoundResult) => r.failed === 0 && r.accepted === r.requests && (r.drafts === null || r.drafts === r.accepted);
  const bad = ![...results, ...baselineResults, ...sameResults].every(whole);
  return bad || (strict && !targetMet) ? 1 : 0;
}

export const BASELINE_TABLE = 'bench_gen_baseline';

/** The minimal plan: one row inserted before the workflow starts, one activity setting its completed_at. */
function minimalPlan(): Plan {
  const jobId = `job_${'0'.repeat(24)}`;
  const statement = (text: string) => ({ client: 0, text, values: [jobId], startMs: 0, endMs: 0 });
  const complete = statement(`update ${BASELINE_TABLE} set completed_at = now() where id = $1`);
  return {
    jobId,
    acceptBefore: [statement(`insert into ${BASELINE_TABLE} (id) values ($1)`)],
    acceptAfter: [],
    activities: [{ type: 'completeBareJob', local: false, statements: [complete] }],
  };
}

export type BareBaseline = Awaited<ReturnType<typeof startBareBaseline>>;

/**
 * A baseline's bare server and worker (`bundlePath`: baselineWorkflows.ts pre-built) replaying the plan in `samePlan`, or
 * the minimal plan; ready once the worker polls its task queue. `env` goes to both, the worker's output to `logDir`.
 */
export async function startBareBaseline(opts: { env: NodeJS.ProcessEnv; logDir: string; bundlePath?: string | null; samePlan?: string }) {
  const name = opts.samePlan ? 'same-statements' : 'baseline';
  let planFile = opts.samePlan;
  if (!planFile) {
    const { db } = await import('../../lib/db');
    await db().raw(
      `create table if not exists ${BASELINE_TABLE} (id text primary key, created_at timestamptz not null default now(), completed_at timestamptz)`,
    );
    fs.writeFileSync((planFile = path.join(opts.logDir, 'generation-minimal-plan.json')), JSON.stringify(minimalPlan()));
  }
  const taskQueue = `bench-gen-${name}`;
  const bundle = opts.bundlePath ? { BENCH_GEN_BASELINE_BUNDLE_PATH: opts.bundlePath } : {};
  const env = { ...opts.env, BENCH_GEN_BASELINE_TASK_QUEUE: taskQueue, BENCH_GEN_PLAN: planFile, ...bundle };
  // Started as `npm run start:worker` starts the worker: its heap limit (lib/workerHeap).
  const log = fs.createWriteStream(path.join(opts.logDir, `generation-${name}-worker.log`));
  const onLine = (line: string) => log.write(`${line}\n`);
  const ready = workerPolls(taskQueue, { address: opts.env.TEMPORAL_ADDRESS });
  const entry = 'bench/generation/baselineWorker.ts';
  const [worker, server] = await Promise.all([
    launch({ kind: 'worker', entry, name: 'baseline worker', env, onLine, ready, readyTimeoutMs: 180_000 }),
    startServer('bare', 'bench/generation/serve-bare.ts', env),
  ]);
  void worker.exited.then(() => log.end());
  const stop = async () => void (await Promise.all([server.stop(), worker.stop()]));
  // `table`: where its jobs' created_at and completed_at are.
  return { server, worker, table: opts.samePlan ? 'jobs' : BASELINE_TABLE, stop };
}

/** `n` requests at once, then `done(accepted ids)` every 100 ms until it counts them all (or `timeoutMs`: an error). */
export async function burst(send: (i: number) => Promise<Reply>, n: number, done: (ids: string[]) => Promise<number>, timeoutMs: number) {
  const t0 = performance.now();
  const replies = await Promise.all(Array.from({ length: n }, (_, i) => send(i)));
  const ids = replies.filter((r) => r.status === 200).map((r) => r.body.data.id as string);
  let count = 0;
  if (!(await until(async () => (count = await done(ids)) >= ids.length, timeoutMs, 100)))
    throw new Error(`only ${count}/${ids.length} jobs done after ${timeoutMs / 1000} s`);
  return { replies, t0, ids };
}

/** One burst at a baseline's server with `body(i)`, queue→done read from its rows. */
export async function bareRound(b: BareBaseline, agent: http.Agent, n: number, body: (i: number) => unknown, timeoutMs: number) {
  const { db } = await import('../../lib/db');
  if (b.table === BASELINE_TABLE) await db()(BASELINE_TABLE).truncate();
  const send = (i: number) => request(agent, `${b.server.baseUrl}/jobs`, 'bare', 'POST', body(i));
  const done = async (ids: string[]) => Number((await db()(b.table).whereIn('id', ids).whereNotNull('completed_at').count('* as n'))[0]!.n);
  const { replies, t0, ids } = await burst(send, n, done, timeoutMs);
  const { rows } = await db().raw(`select created_at, completed_at from ${b.table} where id = any(?)`, [ids]);
  const jobs = rows.map((r: any) => ({ createdAt: r.created_at.getTime(), completedAt: r.completed_at?.getTime() ?? null }));
  return { replies, t0, jobs };
}
