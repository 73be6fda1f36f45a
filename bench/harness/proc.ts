import fs from 'node:fs';
import os from 'node:os';

// CPU accounting from /proc, so a run can say not only how fast but who burned the cores:
// on a small machine the server, Postgres, Redis and the load generator all share them, and
// "requests/s" alone cannot tell a slow handler from a busy database. Linux only; elsewhere
// every snapshot is empty and the report simply leaves the breakdown out.

const CLK_TCK = 100; // USER_HZ: 100 on every mainstream Linux build.

interface ProcTicks {
  pid: number;
  comm: string;
  ticks: number;
}

/** utime + stime of /proc/<pid>/stat, in ticks. comm may contain spaces and parentheses: split at the last ')'. */
function readTicks(pid: string): ProcTicks {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const close = stat.lastIndexOf(')');
  const comm = stat.slice(stat.indexOf('(') + 1, close);
  const fields = stat.slice(close + 2).split(' ');
  // Fields after comm start at index 3 (state); utime and stime are 14 and 15 (1-based).
  return { pid: Number(pid), comm, ticks: Number(fields[11]) + Number(fields[12]) };
}

/** CPU seconds (user + system) a process has used so far; null where /proc cannot say (not Linux, or gone). */
export function cpuSeconds(pid: number): number | null {
  try {
    return readTicks(String(pid)).ticks / CLK_TCK;
  } catch {
    return null;
  }
}

function readAll(): ProcTicks[] {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const out: ProcTicks[] = [];
  for (const d of entries) {
    try {
      out.push(readTicks(d));
    } catch {
      /* the process went away between readdir and read */
    }
  }
  return out;
}

export type Groups = Record<string, (p: { pid: number; comm: string }) => boolean>;

export interface CpuSnapshot {
  at: number;
  byPid: Map<number, ProcTicks>;
  totalBusy: number;
  totalAll: number;
}

function systemTicks(): { busy: number; all: number } {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const all = v.reduce((a, b) => a + b, 0);
    return { busy: all - idle, all };
  } catch {
    return { busy: 0, all: 0 };
  }
}

export function snapshot(): CpuSnapshot {
  const sys = systemTicks();
  return { at: performance.now(), byPid: new Map(readAll().map((p) => [p.pid, p])), totalBusy: sys.busy, totalAll: sys.all };
}

export interface CpuBreakdown {
  /** Busy share of all cores over the window, 0..1. */
  machineBusy: number;
  /** CPU milliseconds per group over the window. */
  cpuMs: Record<string, number>;
  /**
   * Busy CPU time no live process accounts for: processes that started and ended inside the
   * window (a neighbour's compiler, test runner, npm), and kernel work outside any process.
   * Without it a burst of short-lived jobs would look like a quiet machine.
   */
  unaccountedMs: number;
}

/** CPU spent between two snapshots, grouped; processes matching no group land in "other". */
export function diff(a: CpuSnapshot, b: CpuSnapshot, groups: Groups): CpuBreakdown | null {
  if (b.byPid.size === 0) return null;
  const cpuMs: Record<string, number> = {};
  for (const name of Object.keys(groups)) cpuMs[name] = 0;
  cpuMs.other = 0;
  for (const [pid, p] of b.byPid) {
    const before = a.byPid.get(pid)?.ticks ?? 0;
    const delta = ((p.ticks - before) * 1000) / CLK_TCK;
    if (delta <= 0) continue;
    const name = Object.keys(groups).find((g) => groups[g]!(p)) ?? 'other';
    cpuMs[name]! += delta;
  }
  const all = b.totalAll - a.totalAll;
  const busyMs = ((b.totalBusy - a.totalBusy) * 1000) / CLK_TCK;
  const attributed = Object.values(cpuMs).reduce((x, y) => x + y, 0);
  return { machineBusy: all > 0 ? (b.totalBusy - a.totalBusy) / all : 0, cpuMs, unaccountedMs: Math.max(0, busyMs - attributed) };
}

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

export interface QuietOptions {
  /** The longest wait; after it the bench measures anyway. */
  waitMs: number;
  /** The other processes' share of the machine counted as quiet. */
  quietBelow?: number;
  /** This bench's own processes (the rest are "other"); by default this process alone. */
  groups?: () => Groups | Promise<Groups>;
  /** Count busy time no live process accounts for (short-lived neighbours) as other work too. */
  countUnaccounted?: boolean;
  /** Print a line when the wait starts and when it ends. */
  announce?: boolean;
}

/**
 * Holds the next measurement until other processes leave the cores (mostly) to this bench, for
 * at most `waitMs`, sampling one second at a time; answers other work's share of the machine in
 * the last sample, so the report can say how much of it the neighbours took.
 */
export async function waitForQuiet(opts: QuietOptions): Promise<number> {
  const { waitMs, quietBelow = 0.1, countUnaccounted = false, announce = true } = opts;
  const groups = opts.groups ?? (() => ({ bench: (p: { pid: number }) => p.pid === process.pid }));
  const cpus = machineInfo().cpus;
  const deadline = Date.now() + waitMs;
  let announced = false;
  for (;;) {
    const a = snapshot();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const d = diff(a, snapshot(), await groups());
    const share = d ? (d.cpuMs.other! + (countUnaccounted ? d.unaccountedMs : 0)) / (1000 * cpus) : 0;
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
    announced = true;
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
