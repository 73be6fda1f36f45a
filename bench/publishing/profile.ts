import fs from 'node:fs';

// The worker's `--cpu-prof` profiles cover its whole life (start-up, the creation phase, the
// drain). This cuts one down to a wall-clock window so the summary speaks of the drain only.
// V8 stamps samples on a monotonic clock; the profile ends when the process exits, which
// anchors it to the wall clock.

interface CpuProfile {
  nodes: unknown[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Writes `out` with only the samples taken between `fromMs` and `toMs` (wall clock); returns the milliseconds they cover (idle included). */
export function cutProfile(file: string, out: string, exitedAtMs: number, fromMs: number, toMs: number): number {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const samples: number[] = [];
  const deltas: number[] = [0];
  let t = prof.startTime;
  let keptUs = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    const wall = exitedAtMs - (prof.endTime - t) / 1000;
    if (wall < fromMs || wall > toMs) continue;
    // summarizeProfile charges a sample the delta that follows it.
    const dur = prof.timeDeltas[i + 1] ?? 0;
    samples.push(prof.samples[i]!);
    deltas.push(dur);
    keptUs += dur;
  }
  fs.writeFileSync(out, JSON.stringify({ ...prof, samples, timeDeltas: deltas.slice(0, samples.length + 1) }));
  return keptUs / 1000;
}
