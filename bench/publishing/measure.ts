import { quantile } from '../harness/format';
import { summarize } from '../harness/load';
import { machineInfo } from '../harness/proc';

// Figures of the publishing bench: summaries of lags and samples, and the machine's quiet.

export const CPUS = machineInfo().cpus;

export interface ActivitySample {
  t: number;
  connections: number;
  active: number;
  idleInTx: number;
  lockWaits: number;
}

export function statsOf(xs: number[]) {
  if (!xs.length) return { mean: 0, max: 0 };
  return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, max: Math.max(...xs) };
}

export const median = (xs: (number | null)[]) => quantile(xs, 0.5);
export { quantile as pct };

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
