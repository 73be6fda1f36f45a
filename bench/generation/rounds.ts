import fs from 'node:fs';
import path from 'node:path';
import { machineInfo } from '../harness/proc';
import { REPO_ROOT, startServer } from '../harness/servers';
import { launch, workerPolls } from '../../tooling/launcher';
import { Cleanups } from '../harness/cleanups';
import { startBareBaseline } from './baseline';
import { censusControl, describePlan, perJob, planOf, writePlan } from './sameStatements';
import { compareToBaseline, request, summarizeRounds, type Summary } from './figures';
import { setTimeout as sleep } from 'node:timers/promises';
import { f0, step, writeResults } from '../harness/format';
import {
  opt,
  TIMEOUT_MS,
  TARGET_P50_MS,
  BASELINE,
  ORDER,
  TASK_QUEUE,
  RESULTS_DIR,
  CENSUS_ARGS,
  body,
  PROFILE_DIR,
  CENSUS_DIR,
  round,
  lastJobOf,
  historyShape,
  printRound,
  newAgent,
  project,
  sideGroups,
  quiet,
  baselineRoundN,
  baselineWarmup,
} from '../generation';
import type { Bench, Service, Results } from '../generation';

// The generation bench's run and report: the service started with its statement census, one job's statements captured, the rounds against the baselines, the medians.

/** The API and the worker as child processes with the statement census, then the warm-ups. */
export async function startService(b: Bench, cleanups: Cleanups) {
  step('API (bench/harness/serve-app.ts) and worker (workers/main.ts) as child processes, with the statement census');
  if (opt.profile) fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
  // One folder per process: tsx's module loader runs on a thread of its own, which writes a
  // profile of its own next to the main thread's.
  const nodeArgs = (name: string) => [
    ...CENSUS_ARGS,
    ...(opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(PROFILE_DIR, name)}`] : []),
  ];
  const api = await startServer('api', 'bench/harness/serve-app.ts', process.env, nodeArgs('api'));
  cleanups.push(() => api.stop());
  const worker = await launch({ kind: 'worker', nodeArgs: nodeArgs('worker') });
  cleanups.push(() => worker.stop());
  const agent = newAgent();
  cleanups.push(async () => agent.destroy());
  b.pids.service = [api.pid, worker.pid];
  const service = { api, worker, agent, census: censusControl(CENSUS_DIR), groups: sideGroups(b, b.pids.service) };
  await worker.waitReady(workerPolls(TASK_QUEUE), 180_000);
  if (b.bare) await baselineWarmup(b, b.bare, 'baseline');
  if (opt.warmup > 0) {
    step(`warm-up: ${opt.warmup} requests`);
    printRound('warm-up', await round(agent, api.baseUrl, b.key, await project(b, 'Warm-up'), opt.warmup, service.groups));
  }
  return service;
}

/**
 * One job alone, its statements captured in both processes: the same-statements plan, and its
 * baseline started; then what Temporal recorded for one job of each side.
 */
export async function captureOneJob(b: Bench, { api, worker, agent, census }: Service) {
  const { db } = await import('../../lib/db');
  const captureProject = await project(b, 'Capture');
  await census.capture();
  const one = await request(agent, api.baseUrl, b.key, 'POST', '/v1/posts/generations', { projectId: captureProject, ...body(0) });
  if (one.status !== 200) throw new Error(`the captured job was refused: ${one.status} ${JSON.stringify(one.body)}`);
  const capturedJob = one.body.data.id as string;
  for (let t = Date.now(); (await db()('jobs').where({ id: capturedJob }).first('status')).status !== 'DONE'; await sleep(50))
    if (Date.now() - t > TIMEOUT_MS)
      throw new Error(`the captured job did not finish; the worker's last output:\n${worker.tail.join('\n')}`);
  await sleep(300);
  const [apiDump, workerDump] = await census.dump(b.pids.service);
  const plan = planOf(apiDump!, workerDump!, capturedJob);
  const planFile = path.join(RESULTS_DIR, 'generation-same-statements.json');
  writePlan(planFile, plan);
  step(`one job's statements (${path.relative(REPO_ROOT, planFile)}):\n${describePlan(plan)}`);
  if (BASELINE) {
    step('same-statements bare baseline: the same bare server and worker replaying them');
    b.same = await startBareBaseline({ env: process.env, logDir: RESULTS_DIR, bundlePath: b.baselineBundle, samePlan: planFile });
    b.pids.same = [b.same.server.pid, b.same.worker.pid];
    await baselineWarmup(b, b.same, 'same statements');
  }
  console.log(`  history of one job: service ${await historyShape(capturedJob)}`);
  for (const [name, id] of lastJobOf) console.log(`  history of one job: ${name} ${await historyShape(id)}`);
}

/**
 * The measured rounds, then the service's statements per job by process and activity over them.
 * Interleaved: baseline round i, then service round i, so a neighbour's load that comes and goes
 * during the run falls on both sides alike.
 */
export async function runRounds(b: Bench, { api, agent, census, groups }: Service) {
  const [apiBefore, workerBefore] = await census.dump(b.pids.service);
  for (let i = 1; i <= opt.rounds; i++) {
    if (b.bare) await baselineRoundN(b, b.bare, 'baseline', b.baselineResults, i);
    if (b.same) await baselineRoundN(b, b.same, 'same statements', b.sameResults, i);
    await quiet(groups);
    step(`round ${i}: ${opt.requests} requests at once`);
    const r = await round(agent, api.baseUrl, b.key, await project(b, `Round ${i}`), opt.requests, groups);
    printRound(`round ${i}`, r);
    b.results.push(r);
  }
  const [apiAfter, workerAfter] = await census.dump(b.pids.service);
  for (const [name, before, after] of [
    ['API', apiBefore!, apiAfter!],
    ['worker', workerBefore!, workerAfter!],
  ] as const) {
    const rows = perJob(before, after, opt.requests * opt.rounds).filter((r) => r.perJob >= 0.05);
    const total = rows.reduce((n, r) => n + r.perJob, 0);
    console.log(`\n${name}: ${total.toFixed(1)} statements per job over the rounds (those of 0.05 a job or more)`);
    for (const r of rows) console.log(`  ${r.perJob.toFixed(2).padStart(6)}  ${r.activity || '-'}  ${r.text.slice(0, 130)}`);
  }
}

/** The medians against each baseline, the lines scripts read, bench/results/generation.json, the profiles; the exit code. */
export async function report({ results, baselineResults, sameResults }: Results) {
  const summary = summarizeRounds(results);
  const baselineSummary: Summary | null = baselineResults.length ? summarizeRounds(baselineResults) : null;
  const sameSummary: Summary | null = sameResults.length ? summarizeRounds(sameResults) : null;
  const versus = baselineSummary ? compareToBaseline(summary, baselineSummary) : null;
  const versusSame = sameSummary ? compareToBaseline(summary, sameSummary) : null;
  const line = (s: Summary) =>
    `${s.acceptedPerSecond.toFixed(0)} accepted/s, answer p50 ${f0(s.answerP50Ms)} ms, queue→done p50 ${f0(s.queueToDoneP50Ms)} ms, p99 ${f0(s.queueToDoneP99Ms)} ms, drain ${s.drainPerSecond.toFixed(1)} jobs/s`;
  console.log(`\nmedian of ${results.length} rounds: ${line(summary)}`);
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(0)}%`);
  const vs = (name: string, base: Summary, v: ReturnType<typeof compareToBaseline>) =>
    console.log(
      `vs the ${name} of this run: queue→done p50 ${f0(summary.queueToDoneP50Ms)} ms (service) vs ${f0(base.queueToDoneP50Ms)} ms (baseline),` +
        ` ratio baseline/service ${v.queueToDoneP50Ratio === null ? 'n/a' : v.queueToDoneP50Ratio.toFixed(2)}` +
        ` | accepted/s ${pct(v.acceptedPerSecondShare)} of the baseline's | drain ${pct(v.drainShare)} of the baseline's`,
    );
  if (baselineSummary && versus) {
    console.log(`minimal bare baseline, median of ${baselineResults.length} rounds: ${line(baselineSummary)}`);
    vs('minimal bare baseline', baselineSummary, versus);
  }
  if (sameSummary && versusSame) {
    console.log(`same-statements bare baseline, median of ${sameResults.length} rounds: ${line(sameSummary)}`);
    vs('same-statements bare baseline', sameSummary, versusSame);
  }
  // On lines a script can read, as the read surfaces' benches print them (bench/harness/statements.ts):
  // queue→done p50 of the service against its statements bare, and theirs against the minimal job.
  const tag = `generation [${opt.requests} at once]`;
  if (versusSame?.queueToDoneP50Ratio != null)
    console.log(`  ${tag}: API / same statements bare: ${versusSame.queueToDoneP50Ratio.toFixed(2)}×`);
  if (sameSummary && baselineSummary && baselineSummary.queueToDoneP50Ms > 0)
    console.log(`  ${tag}: same statements / minimal: ${(sameSummary.queueToDoneP50Ms / baselineSummary.queueToDoneP50Ms).toFixed(2)}×`);
  const file = writeResults('generation', {
    at: new Date().toISOString(),
    machine: machineInfo(),
    options: { requests: opt.requests, rounds: opt.rounds, warmup: opt.warmup, baseline: BASELINE, baselineOrder: ORDER },
    summary,
    rounds: results,
    baseline: baselineSummary ? { summary: baselineSummary, rounds: baselineResults } : null,
    vsBaseline: versus,
    sameStatements: sameSummary ? { summary: sameSummary, rounds: sameResults } : null,
    vsSameStatements: versusSame,
  });
  if (opt.profile) {
    const { printProfile, summarizeProfile } = await import('../harness/profile');
    const jobs = opt.warmup + opt.requests * opt.rounds;
    for (const name of ['api', 'worker']) {
      const dir = path.join(PROFILE_DIR, name);
      // The main thread's profile is the largest (the loader thread's only covers imports).
      const [file] = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(dir, f))
        .sort((a, b) => fs.statSync(b).size - fs.statSync(a).size);
      if (file) printProfile(`${name} (per job: ${jobs} jobs)`, summarizeProfile(file, REPO_ROOT, 25), jobs);
      else console.log(`no profile of the ${name} in ${dir}`);
    }
  }
  // The target stays absolute (issue 19), queue→DONE p50 of the burst; the baseline ratio is
  // printed beside it, and --strict still fails on the absolute miss only.
  const targetMet = summary.queueToDoneP50Ms <= TARGET_P50_MS;
  console.log(`target: queue→done p50 ≤ ${f0(TARGET_P50_MS)} ms: ${targetMet ? 'met' : 'MISSED'} (${f0(summary.queueToDoneP50Ms)} ms)`);
  console.log(`results: ${path.relative(REPO_ROOT, file)}`);
  const bad = [...results, ...baselineResults, ...sameResults].some(
    (r) => r.failed > 0 || r.accepted !== r.requests || (r.drafts !== null && r.drafts !== r.accepted),
  );
  process.exit(bad || (opt.strict && !targetMet) ? 1 : 0);
}
