import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Connection } from '@temporalio/client';
import { launch, workerPolls } from '../../tooling/launcher';

// A worker of the publishing benches, started by the one launcher (tooling/launcher.ts) as
// `npm run start:worker` starts it, its output in a log file and its resident memory sampled
// from /proc.

export interface RssSample {
  t: number;
  rssKiB: number;
}

export interface WorkerRun {
  index: number;
  pid: number;
  child: ChildProcess;
  startedAt: number;
  /** When both its workflow and its activity pollers were seen by the Temporal server. */
  readyAt: number | null;
  exitedAt: number | null;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  samples: RssSample[];
  /** Highest VmRSS sampled and the kernel's own high-water mark (VmHWM) at the last sample. */
  peakRssKiB: number;
  hwmKiB: number;
  logFile: string;
  /** Last lines of its stdout/stderr, for error messages. */
  tail: string[];
  waitReady(connection: Connection, taskQueue: string, timeoutMs?: number): Promise<number>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM, as a deployment stops it (it finishes its tasks), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

function readStatus(pid: number): { rss: number; hwm: number } | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(text);
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(text);
    return rss ? { rss: Number(rss[1]), hwm: hwm ? Number(hwm[1]) : 0 } : null;
  } catch {
    return null;
  }
}

/** The worker (or, with `script`, a bench's baseline worker standing in for it), not yet waited for. */
export async function startWorker(
  index: number,
  env: NodeJS.ProcessEnv,
  opts: { logDir: string; sampleMs?: number; execArgv?: string[]; script?: string; logName?: string },
): Promise<WorkerRun> {
  fs.mkdirSync(opts.logDir, { recursive: true });
  const logFile = path.join(opts.logDir, opts.logName ?? `publishing-worker-${index}.log`);
  const log = fs.createWriteStream(logFile);
  const p = await launch({
    kind: 'worker',
    entry: opts.script,
    name: `worker ${index}`,
    env,
    nodeArgs: opts.execArgv,
    onLine: (line) => log.write(`${line}\n`),
  });
  const run: WorkerRun = {
    index,
    pid: p.pid,
    child: p.child,
    startedAt: Date.now(),
    readyAt: null,
    exitedAt: null,
    exit: null,
    samples: [],
    peakRssKiB: 0,
    hwmKiB: 0,
    logFile,
    tail: p.tail,
    async waitReady(connection, taskQueue, timeoutMs = 180_000) {
      await p.waitReady(workerPolls(taskQueue, { connection }), timeoutMs);
      run.readyAt ??= Date.now();
      return run.readyAt;
    },
    kill: async (signal = 'SIGKILL') => void (await p.kill(signal)),
    stop: async (graceMs = 15_000) => void (await p.stop(graceMs)),
  };
  const sample = () => {
    const s = readStatus(run.pid);
    if (!s) return;
    run.samples.push({ t: Date.now(), rssKiB: s.rss });
    if (s.rss > run.peakRssKiB) run.peakRssKiB = s.rss;
    if (s.hwm > run.hwmKiB) run.hwmKiB = s.hwm;
  };
  sample();
  const timer = setInterval(sample, opts.sampleMs ?? 250);
  p.child.once('exit', (code, signal) => {
    clearInterval(timer);
    run.exitedAt = Date.now();
    run.exit = { code, signal };
    log.end();
  });
  return run;
}
