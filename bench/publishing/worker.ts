import fs from 'node:fs';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import { launch, workerPolls } from '../../tooling/launcher';

// A worker of the benches that publish, started by the one launcher (tooling/launcher.ts) as
// `npm run start:worker` starts it, its output in a log file and its resident memory sampled
// from /proc.

export type WorkerRun = Awaited<ReturnType<typeof startWorker>>;

/** VmRSS and the kernel's high-water mark (VmHWM) of a process, in KiB; null once it is gone. */
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
) {
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
  const run = {
    index,
    pid: p.pid,
    child: p.child,
    startedAt: Date.now(),
    /** When both its workflow and its activity pollers were seen by the Temporal server. */
    readyAt: null as number | null,
    exitedAt: null as number | null,
    exit: null as { code: number | null; signal: NodeJS.Signals | null } | null,
    samples: [] as Array<{ t: number; rssKiB: number }>,
    /** Highest VmRSS sampled and the kernel's own high-water mark (VmHWM) at the last sample. */
    peakRssKiB: 0,
    hwmKiB: 0,
    logFile,
    /** Last lines of its stdout/stderr, for error messages. */
    tail: p.tail,
    async waitReady(connection: Connection, taskQueue: string, timeoutMs = 180_000): Promise<number> {
      await p.waitReady(workerPolls(taskQueue, { connection }), timeoutMs);
      return (run.readyAt ??= Date.now());
    },
    kill: async (signal: NodeJS.Signals = 'SIGKILL') => void (await p.kill(signal)),
    /** SIGTERM, as a deployment stops it (it finishes its tasks), SIGKILL after `graceMs`. */
    stop: async (graceMs = 15_000) => void (await p.stop(graceMs)),
  };
  const sample = () => {
    const s = readStatus(run.pid);
    if (!s) return;
    run.samples.push({ t: Date.now(), rssKiB: s.rss });
    run.peakRssKiB = Math.max(run.peakRssKiB, s.rss);
    run.hwmKiB = Math.max(run.hwmKiB, s.hwm);
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
