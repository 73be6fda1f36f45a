// How `npm test` (tooling/test.ts) deals the spec files out to its parallel runs.

import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from './launcher';

/** The seconds a spec file not in test/durations.json counts for. */
export const UNKNOWN_SECONDS = 5;

/** Every spec file (`*.test.ts`) under `dir`, relative to the repository, sorted. */
export async function specFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(REPO_ROOT, dir), { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) return specFiles(rel);
      return Promise.resolve(e.name.endsWith('.test.ts') ? [rel] : []);
    }),
  );
  return nested.flat().sort();
}

/** Longest first, each file to the run with the fewest seconds so far; each run's files in path order. */
export function deal(files: string[], seconds: Record<string, number>, shards: number): string[][] {
  const load = Array.from({ length: shards }, () => 0);
  const into = Array.from({ length: shards }, () => [] as string[]);
  const weight = (f: string) => seconds[f] ?? UNKNOWN_SECONDS;
  for (const f of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const i = load.indexOf(Math.min(...load));
    load[i]! += weight(f);
    into[i]!.push(f);
  }
  return into.filter((s) => s.length > 0).map((s) => s.sort());
}
