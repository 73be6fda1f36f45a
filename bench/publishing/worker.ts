import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import { pollsBothHalves } from '../harness/worker';

// The worker of the publishing bench: `node --import tsx workers/main.ts` as a child process
// (no tsx supervisor in between, so SIGKILL reaches the process that runs the worker and its
// pid is the one whose memory we read), with its resident memory sampled from /proc.

const ROOT = path.resolve(import.meta.dirname, '..', '..');

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startWorker(
  index: number,
  env: NodeJS.ProcessEnv,
  opts: { logDir: string; sampleMs?: number; execArgv?: string[]; script?: string; logName?: string },
): WorkerRun {
  const sampleMs = opts.sampleMs ?? 250;
  fs.mkdirSync(opts.logDir, { recursive: true });
  const logFile = path.join(opts.logDir, opts.logName ?? `publishing-worker-${index}.log`);
  const log = fs.createWriteStream(logFile);
  const script = opts.script ?? path.join(ROOT, 'workers', 'main.ts');
  const child = spawn(process.execPath, [...(opts.execArgv ?? []), '--import', 'tsx', script], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: WorkerRun = {
    index,
    pid: child.pid!,
    child,
    startedAt: Date.now(),
    readyAt: null,
    exitedAt: null,
    exit: null,
    samples: [],
    peakRssKiB: 0,
    hwmKiB: 0,
    logFile,
    tail: [],
    async waitReady(connection, taskQueue, timeoutMs = 180_000) {
      // The worker's default identity is `<pid>@<hostname>`: ready once the server has seen
      // this very process poll both halves of the task queue.
      const identity = `${run.pid}@${os.hostname()}`;
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (run.exit)
          throw new Error(`worker ${index} exited (${run.exit.signal ?? run.exit.code}) before it was ready:\n${run.tail.join('')}`);
        if (await pollsBothHalves(connection, taskQueue, identity)) {
          run.readyAt ??= Date.now();
          return run.readyAt;
        }
        await sleep(100);
      }
      throw new Error(`worker ${index} (pid ${run.pid}) did not poll ${taskQueue} within ${timeoutMs / 1000} s:\n${run.tail.join('')}`);
    },
    kill(signal = 'SIGKILL') {
      return new Promise((resolve) => {
        if (run.exit) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      });
    },
  };
  const keep = (d: Buffer) => {
    log.write(d);
    run.tail.push(d.toString());
    if (run.tail.length > 40) run.tail.shift();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);

  const sample = () => {
    const s = readStatus(run.pid);
    if (!s) return;
    run.samples.push({ t: Date.now(), rssKiB: s.rss });
    if (s.rss > run.peakRssKiB) run.peakRssKiB = s.rss;
    if (s.hwm > run.hwmKiB) run.hwmKiB = s.hwm;
  };
  sample();
  const timer = setInterval(sample, sampleMs);
  child.once('exit', (code, signal) => {
    clearInterval(timer);
    run.exitedAt = Date.now();
    run.exit = { code, signal };
    log.end();
  });
  return run;
}
