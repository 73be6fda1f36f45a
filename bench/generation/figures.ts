import type http from 'node:http';
import { requestText, summarize, type LatencySummary } from '../harness/load';
import type { CpuBreakdown } from '../harness/proc';

// What the generation bench measures of one burst, for the service's rounds and the bare
// baseline's alike: the requests as sent and answered, then each job's queue→done time from
// the database's own clock (created_at → completed_at), so both sides are read the same way.

export interface Reply {
  status: number;
  body: any;
  sentAt: number;
  answeredAt: number;
}

/** One request on the bench's agent; the body is parsed as JSON when it is JSON. */
export async function request(
  agent: http.Agent,
  baseUrl: string,
  key: string,
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<Reply> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers = { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) };
  const sentAt = performance.now();
  const res = await requestText(agent, new URL(urlPath, baseUrl), method, headers, payload);
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
export interface JobTimes {
  createdAt: number;
  completedAt: number | null;
}

export interface RoundResult {
  requests: number;
  accepted: number;
  refused: Record<string, number>;
  burstMs: number;
  acceptedPerSecond: number;
  acceptLatencyMs: LatencySummary;
  queueToDoneMs: LatencySummary;
  lastDoneAfterMs: number;
  /** Jobs done per second, from the first job queued to the last one done. */
  drainPerSecond: number;
  failed: number;
  /** Drafts the service wrote (the baseline writes none: null). */
  drafts: number | null;
  /** Who used the CPU during the round (ms), and how busy the whole machine was. */
  cpu: CpuBreakdown | null;
}

/** The figures of one burst: `t0` is when its first request left (performance.now()). */
export function roundFigures(input: {
  requests: number;
  replies: Reply[];
  t0: number;
  jobs: JobTimes[];
  drafts: number | null;
  cpu: CpuBreakdown | null;
}): RoundResult {
  const { replies, jobs } = input;
  const accepted = replies.filter((r) => r.status === 200);
  const refused: Record<string, number> = {};
  for (const r of replies) {
    if (r.status === 200) continue;
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
    drainPerSecond: lastDoneAfterMs > 0 ? done.length / (lastDoneAfterMs / 1000) : 0,
    failed: jobs.length - done.length,
    drafts: input.drafts,
    cpu: input.cpu,
  };
}

export interface Summary {
  acceptedPerSecond: number;
  answerP50Ms: number;
  queueToDoneP50Ms: number;
  queueToDoneP99Ms: number;
  drainPerSecond: number;
}

/** Each figure's median over the rounds (the lower middle one of an even count). */
export function summarizeRounds(results: RoundResult[]): Summary {
  const med = (f: (r: RoundResult) => number) => {
    const v = results.map(f).sort((a, b) => a - b);
    return v[Math.floor((v.length - 1) / 2)] ?? 0;
  };
  return {
    acceptedPerSecond: med((r) => r.acceptedPerSecond),
    answerP50Ms: med((r) => r.acceptLatencyMs.p50),
    queueToDoneP50Ms: med((r) => r.queueToDoneMs.p50),
    queueToDoneP99Ms: med((r) => r.queueToDoneMs.p99),
    drainPerSecond: med((r) => r.drainPerSecond),
  };
}

export interface VersusBaseline {
  /** baseline p50 / service p50: 1 = the service is as quick as bare Temporal, 0.25 = 4× slower. */
  queueToDoneP50Ratio: number | null;
  /** service accepted/s as a fraction of the baseline's. */
  acceptedPerSecondShare: number | null;
  /** service jobs done per second as a fraction of the baseline's. */
  drainShare: number | null;
}

const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? a / b : null);

export function compareToBaseline(service: Summary, baseline: Summary): VersusBaseline {
  return {
    queueToDoneP50Ratio: ratio(baseline.queueToDoneP50Ms, service.queueToDoneP50Ms),
    acceptedPerSecondShare: ratio(service.acceptedPerSecond, baseline.acceptedPerSecond),
    drainShare: ratio(service.drainPerSecond, baseline.drainPerSecond),
  };
}
