import fs from 'node:fs';
import os from 'node:os';
import type pg from 'pg';

// CPU accounting from /proc: who burned the cores, not only how fast (bench/README.md). Linux
// only; elsewhere every snapshot is empty and the report leaves the breakdown out.

const CLK_TCK = 100; // USER_HZ: 100 on every mainstream Linux build.

type ProcTicks = { pid: number; comm: string; ticks: number };

/** utime + stime of /proc/<pid>/stat, in ticks. comm may contain spaces and parentheses: split at the last ')'. */
function readTicks(pid: string): ProcTicks {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const close = stat.lastIndexOf(')');
  // Fields after comm start at index 3 (state); utime and stime are 14 and 15 (1-based).
  const fields = stat.slice(close + 2).split(' ');
  return { pid: Number(pid), comm: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** `read()`, or `fallback` where /proc cannot say (not Linux, or the process is gone). */
function orElse<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/** CPU seconds (user + system) a process has used so far; null where /proc cannot say. */
export const cpuSeconds = (pid: number): number | null => orElse(() => readTicks(String(pid)).ticks / CLK_TCK, null);

export type Groups = Record<string, (p: { pid: number; comm: string }) => boolean>;
export type CpuSnapshot = ReturnType<typeof snapshot>;

export function snapshot() {
  const pids = orElse(() => fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)), []);
  const procs = pids.flatMap((d) => orElse(() => [readTicks(d)], []));
  // The first line of /proc/stat: the machine's ticks by kind; idle and iowait are not busy.
  const v = orElse(() => fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number), []);
  const totalAll = v.reduce((a, b) => a + b, 0);
  return { at: performance.now(), byPid: new Map(procs.map((p) => [p.pid, p])), totalBusy: totalAll - (v[3] ?? 0) - (v[4] ?? 0), totalAll };
}

/**
 * CPU ms between two snapshots by group (no group: "other"), the cores' busy share (0..1), and the
 * busy time no live process accounts for (short-lived processes, kernel work outside any process).
 */
export function diff(a: CpuSnapshot, b: CpuSnapshot, groups: Groups) {
  if (b.byPid.size === 0) return null;
  const names = Object.keys(groups);
  const cpuMs: Record<string, number> = Object.fromEntries([...names, 'other'].map((name) => [name, 0]));
  for (const [pid, p] of b.byPid) {
    const delta = ((p.ticks - (a.byPid.get(pid)?.ticks ?? 0)) * 1000) / CLK_TCK;
    if (delta > 0) cpuMs[names.find((g) => groups[g]!(p)) ?? 'other']! += delta;
  }
  const all = b.totalAll - a.totalAll;
  const busyMs = ((b.totalBusy - a.totalBusy) * 1000) / CLK_TCK;
  const attributed = Object.values(cpuMs).reduce((x, y) => x + y, 0);
  return { machineBusy: all > 0 ? (b.totalBusy - a.totalBusy) / all : 0, cpuMs, unaccountedMs: Math.max(0, busyMs - attributed) };
}
export type CpuBreakdown = NonNullable<ReturnType<typeof diff>>;

export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
  };
}

/**
 * The Postgres processes serving `databases` (pg_stat_activity now) as a CPU group: every postgres
 * process but other databases' client backends (background processes count as ours); with
 * `backendsOnly`, only the backends connected to `databases`.
 */
export async function postgresCpuGroup(
  client: pg.Client,
  databases: string | readonly string[],
  opts: { backendsOnly?: boolean } = {},
): Promise<Groups[string]> {
  const ours = new Set([databases].flat());
  const { rows } = await client.query<{ pid: number; datname: string | null; backend_type: string }>(
    'select pid, datname, backend_type from pg_stat_activity',
  );
  const isOurs = (r: (typeof rows)[number]) => r.datname !== null && ours.has(r.datname);
  if (opts.backendsOnly) {
    const backends = new Set(rows.filter(isOurs).map((r) => r.pid));
    return (p) => backends.has(p.pid);
  }
  const foreign = new Set(rows.filter((r) => r.backend_type === 'client backend' && !isOurs(r)).map((r) => r.pid));
  return (p) => p.comm === 'postgres' && !foreign.has(p.pid);
}

/**
 * Waits (at most `waitMs`, sampling a second at a time) until other processes leave the cores to
 * this bench: other work's share in the last sample. `quietBelow`: the quiet share; `groups`: this
 * bench's processes (default: this one); `countUnaccounted`: unaccounted busy time (short-lived
 * neighbours) counts as other work; `announce`: a line when the wait starts and ends.
 */
export async function waitForQuiet(opts: {
  waitMs: number;
  quietBelow?: number;
  groups?: () => Groups | Promise<Groups>;
  countUnaccounted?: boolean;
  announce?: boolean;
}): Promise<number> {
  const { waitMs, quietBelow = 0.1, countUnaccounted = false, announce = true } = opts;
  const groups = opts.groups ?? (() => ({ bench: (p: { pid: number }) => p.pid === process.pid }));
  const deadline = Date.now() + waitMs;
  for (let announced = false; ; announced = true) {
    const a = snapshot();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const d = diff(a, snapshot(), await groups());
    const share = d ? (d.cpuMs.other! + (countUnaccounted ? d.unaccountedMs : 0)) / (1000 * os.cpus().length) : 0;
    const pct = (share * 100).toFixed(0);
    if (share < quietBelow) {
      if (announce && announced) console.log(`    machine quiet again (other work ${pct}%)`);
      return share;
    }
    if (Date.now() >= deadline) {
      if (announce && waitMs > 0) console.log(`    still busy after ${waitMs / 1000} s (other work ${pct}%); measuring anyway`);
      return share;
    }
    if (announce && !announced) console.log(`    waiting for the machine to quiet down: other work uses ${pct}% of it`);
  }
}

/** Polls `check` every `everyMs` until it holds (true) or `timeoutMs` has passed (false). */
export async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs = 1000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
