import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { f0, quantile, REPO_ROOT, writeResults } from '../harness/format';
import { requestText, summarize } from '../harness/load';
import { machineInfo, type CpuBreakdown } from '../harness/proc';

// What the generation bench measures of one burst, the service's and a bare baseline's alike:
// the requests as sent and answered, then each job's queue→done from its created_at → completed_at.

export type Reply = { status: number; body: any; sentAt: number; answeredAt: number };

/** One request on the bench's agent to `url`; the body is parsed as JSON when it is JSON. */
export async function request(agent: http.Agent, url: string, key: string, method: string, body?: unknown): Promise<Reply> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers = { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) };
  const sentAt = performance.now();
  const res = await requestText(agent, new URL(url), method, headers, payload);
  const answeredAt = performance.now();
  let parsed: unknown = res.body;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    /* keep text */
  }
  return { status: res.status, body: parsed, sentAt, answeredAt };
}

/** One accepted job as its row tells it (ms since the epoch); completedAt null: it did not finish. */
export type JobTimes = { createdAt: number; completedAt: number | null };

export type RoundResult = ReturnType<typeof roundFigures>;

/** The figures of one burst: `t0` is when its first request left (performance.now()). */
export function roundFigures(input: {
  requests: number;
  replies: Reply[];
  t0: number;
  jobs: JobTimes[];
  /** Drafts the service wrote (a baseline writes none: null). */
  drafts: number | null;
  /** Who used the CPU during the round (ms), and how busy the whole machine was. */
  cpu: CpuBreakdown | null;
}) {
  const { replies, jobs } = input;
  const accepted = replies.filter((r) => r.status === 200);
  const refused: Record<string, number> = {};
  for (const r of replies.filter((r) => r.status !== 200)) {
    const k = `${r.status} ${r.body?.error?.code ?? ''}`.trim();
    refused[k] = (refused[k] ?? 0) + 1;
  }
  const burstMs = replies.length ? Math.max(...replies.map((r) => r.answeredAt)) - input.t0 : 0;
  const done = jobs.filter((j): j is { createdAt: number; completedAt: number } => j.completedAt !== null);
  const firstCreated = jobs.length ? Math.min(...jobs.map((j) => j.createdAt)) : 0;
  const lastDoneAfterMs = done.length ? Math.max(...done.map((j) => j.completedAt)) - firstCreated : 0;
  return {
    requests: input.requests,
    accepted: accepted.length,
    refused,
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
    console.log(`    CPU seconds: ${parts} | machine busy ${(r.cpu.machineBusy * 100).toFixed(0)}% of ${cpus} cores`);
  }
}

/** The target stays absolute (issue 19): queue→done p50 of the burst, whatever the baselines. */
const TARGET_P50_MS = 1_000;

/** The medians against each baseline, the lines scripts read, generation.json, the profiles; the exit code. */
export async function report(
  results: RoundResult[],
  baselineResults: RoundResult[],
  sameResults: RoundResult[],
  opts: {
    options: Record<string, unknown> & { requests: number; rounds: number; warmup: number };
    strict: boolean;
    profileDir: string | null;
  },
): Promise<number> {
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
  const tag = `generation [${opts.options.requests} at once]`;
  if (same?.versus.queueToDoneP50Ratio != null)
    console.log(`  ${tag}: API / same statements bare: ${same.versus.queueToDoneP50Ratio.toFixed(2)}×`);
  if (same && minimal && minimal.summary.queueToDoneP50Ms > 0)
    console.log(`  ${tag}: same statements / minimal: ${(same.summary.queueToDoneP50Ms / minimal.summary.queueToDoneP50Ms).toFixed(2)}×`);
  const file = writeResults('generation', {
    at: new Date().toISOString(),
    machine: machineInfo(),
    options: opts.options,
    summary,
    rounds: results,
    baseline: minimal && { summary: minimal.summary, rounds: baselineResults },
    vsBaseline: minimal?.versus ?? null,
    sameStatements: same && { summary: same.summary, rounds: sameResults },
    vsSameStatements: same?.versus ?? null,
  });
  if (opts.profileDir) {
    const { printProfile, summarizeProfile } = await import('../harness/profile');
    const jobs = opts.options.warmup + opts.options.requests * opts.options.rounds;
    for (const name of ['api', 'worker']) {
      const dir = path.join(opts.profileDir, name);
      // The main thread's profile is the largest (the loader thread's only covers imports).
      const [file] = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(dir, f))
        .sort((a, b) => fs.statSync(b).size - fs.statSync(a).size);
      if (file) printProfile(`${name} (per job: ${jobs} jobs)`, summarizeProfile(file, REPO_ROOT, 25), jobs);
      else console.log(`no profile of the ${name} in ${dir}`);
    }
  }
  const targetMet = summary.queueToDoneP50Ms <= TARGET_P50_MS;
  console.log(`target: queue→done p50 ≤ ${f0(TARGET_P50_MS)} ms: ${targetMet ? 'met' : 'MISSED'} (${f0(summary.queueToDoneP50Ms)} ms)`);
  console.log(`results: ${path.relative(REPO_ROOT, file)}`);
  const bad = [...results, ...baselineResults, ...sameResults].some(
    (r) => r.failed > 0 || r.accepted !== r.requests || (r.drafts !== null && r.drafts !== r.accepted),
  );
  return bad || (opts.strict && !targetMet) ? 1 : 0;
}
