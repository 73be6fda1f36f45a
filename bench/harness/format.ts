import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The pieces of a bench's report: the progress line, number formats, the results folder.

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');

/** A progress line of the set-up and the run. */
export const step = (text: string) => console.log(`• ${text}`);
/** A whole number with thousands separators: 12,345. */
export const f0 = (x: number) => Math.round(x).toLocaleString('en-US');
export const f1 = (x: number) => x.toFixed(1);
/** Milliseconds as seconds with one decimal. */
export const s1 = (ms: number) => (ms / 1000).toFixed(1);
export const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
/** The machine's 1, 5 and 15 minute load averages, `digits` decimals each. */
export const loadAverage = (digits: number) => Array.from(os.loadavg(), (l) => l.toFixed(digits)).join(' ');
export const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** `o` with `f` applied to each of its values. */
export const mapValues = <T, U>(o: Record<string, T>, f: (v: T) => U) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
/** `o`'s entries, each as `item` writes it, joined by commas. */
export const listEntries = (o: Record<string, number>, item: (k: string, v: number) => string) =>
  Array.from(Object.entries(o), ([k, v]) => item(k, v)).join(', ');
/** One more of `key` in `counts`. */
export const tally = (counts: Record<string, number>, key: string) => (counts[key] = (counts[key] ?? 0) + 1);

/** A table's row: the first cell left-aligned to its width, the others right-aligned to theirs, joined by `sep`. */
export const columns =
  (widths: readonly number[], sep = '') =>
  (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[0]!) : c.padStart(widths[i]!))).join(sep);

/** The q-quantile (0..1) of sorted numbers, at least one: the smallest value with at least q of them at or below it. */
export const quantileOfSorted = (v: ArrayLike<number>, q: number) => v[Math.min(v.length - 1, Math.max(0, Math.ceil(q * v.length) - 1))]!;

/** The q-quantile (0..1) of numbers, nulls left out (quantileOfSorted). */
export function quantile(xs: readonly (number | null)[], q: number): number | null {
  const v = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
  return v.length ? quantileOfSorted(v, q) : null;
}

/** Writes `bench/results/<name>.json` and says where; returns its path. */
export function writeResults(name: string, results: unknown): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const out = path.join(RESULTS_DIR, `${name}.json`);
  fs.writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  return out;
}
