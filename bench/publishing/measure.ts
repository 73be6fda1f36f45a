import { summarize } from '../harness/load';

/** Lags in milliseconds, summarized in seconds (the publishing and population benches). */
export function lagSummary(lagsMs: number[]) {
  const s = summarize(lagsMs);
  return {
    count: s.count,
    meanS: s.mean / 1000,
    p50S: s.p50 / 1000,
    p90S: s.p90 / 1000,
    p99S: s.p99 / 1000,
    p999S: s.p999 / 1000,
    maxS: s.max / 1000,
  };
}
