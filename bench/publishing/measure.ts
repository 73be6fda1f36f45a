import { quantile } from '../harness/format';
import { summarize } from '../harness/load';
import { diff, machineInfo, snapshot } from '../harness/proc';
import { setTimeout as sleep } from 'node:timers/promises';

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

/** CPU of other processes (not this bench's) as a share of the machine, over one second. */
async function otherShareNow(): Promise<number> {
  const a = snapshot();
  await sleep(1000);
  const d = diff(a, snapshot(), { bench: (p) => p.pid === process.pid });
  return d ? d.cpuMs.other! / (1000 * CPUS) : 0;
}

/**
 * The run is long and cannot pause once posts are due, so it only waits for a quiet machine
 * before it starts; the report then says how much of the machine other processes took.
 */
export async function waitForQuiet(waitMs: number): Promise<number> {
  const deadline = Date.now() + waitMs;
  let announced = false;
  for (;;) {
    const share = await otherShareNow();
    if (share < 0.1 || Date.now() >= deadline) {
      if (share >= 0.1 && waitMs > 0)
        console.log(`    still busy after ${waitMs / 1000} s (other processes ${(share * 100).toFixed(0)}%); running anyway`);
      else if (announced) console.log(`    machine quiet (other processes ${(share * 100).toFixed(0)}%)`);
      return share;
    }
    if (!announced) console.log(`    waiting for the machine to quiet down: other processes use ${(share * 100).toFixed(0)}% of it`);
    announced = true;
  }
}
