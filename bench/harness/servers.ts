import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch } from '../../tooling/launcher';
import { REPO_ROOT, RESULTS_DIR } from './format';
import { closedLoop, type RunResult, type Target } from './load';
import type { ChildMessage, GcStats, ParentMessage } from './serverChild';

// The parent side of a bench server (serverChild.ts): launched, ready once it listens, driven over IPC.

export { REPO_ROOT };

export interface ServerHandle {
  name: string;
  pid: number;
  port: number;
  baseUrl: string;
  /** CPU time (µs) and GC pauses the server process has had so far, and its live heap now. */
  usage(): Promise<{ cpuUs: number; gc: GcStats; heapUsedBytes: number }>;
  profileStart(intervalUs?: number, opts?: { survivorsOnly?: boolean }): Promise<void>;
  profileStop(file: string): Promise<string>;
  call<T>(name: string, args?: unknown): Promise<T>;
  stop(): Promise<void>;
}

function request<T extends ChildMessage['type']>(child: ChildProcess, msg: ParentMessage, reply: T, timeoutMs = 120_000) {
  return new Promise<Extract<ChildMessage, { type: T }>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`no "${reply}" from the server within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (m: ChildMessage) => {
      if (m.type !== reply) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(m as Extract<ChildMessage, { type: T }>);
    };
    child.on('message', onMessage);
    child.send(msg);
  });
}

export async function startServer(name: string, entry: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<ServerHandle> {
  let port = 0;
  // The real API (serve-app.ts) gets api/main.ts's Node options (lib/apiRuntime.ts); the bare servers Node's defaults.
  const p = await launch({
    kind: entry === 'bench/harness/serve-app.ts' ? 'api' : undefined,
    entry,
    name: `${name} server`,
    env,
    nodeArgs,
    ipc: true,
    ready: { message: (m: ChildMessage) => m.type === 'listening' && (port = m.port) > 0 },
    // No hurry: a loaded machine may take minutes to load the app's modules.
    readyTimeoutMs: 600_000,
    onLine: (line, stream) => (stream === 'stdout' ? process.stdout : process.stderr).write(`${line}\n`),
  });
  const child = p.child;
  return {
    name,
    pid: child.pid!,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    usage: async () => {
      const { userUs, systemUs, gc, heapUsedBytes } = await request(child, { type: 'cpu' }, 'cpu');
      return { cpuUs: userUs + systemUs, gc, heapUsedBytes };
    },
    profileStart: async (intervalUs, opts) =>
      void (await request(child, { type: 'profile-start', intervalUs, survivorsOnly: opts?.survivorsOnly }, 'profile-started')),
    profileStop: async (file) => (await request(child, { type: 'profile-stop', file }, 'profile-stopped')).file,
    call: async <T>(callName: string, args?: unknown) => {
      const m = await request(child, { type: 'call', name: callName, args }, 'called', 600_000);
      if (m.error) throw new Error(`${name}.${callName}: ${m.error}`);
      return m.result as T;
    },
    stop: async () => {
      // Asked over IPC (serverChild.ts closes its server and stores), SIGTERM then SIGKILL if it does not end.
      if (p.running()) child.send({ type: 'stop' } satisfies ParentMessage);
      await Promise.race([p.exited, sleep(10_000)]);
      await p.stop(1_000);
    },
  };
}

/**
 * `work` run against `server`, with the server's CPU per call over it (µs; `calls` of the result)
 * and, with `profile`, its CPU profile over it printed per call (bench/results/profiles/<file>.cpuprofile).
 */
export async function withServerCpu<T>(
  server: Pick<ServerHandle, 'usage' | 'profileStart' | 'profileStop'>,
  work: () => Promise<T>,
  calls: (result: T) => number,
  profile?: { file: string; title: string },
): Promise<{ result: T; cpuUs: number }> {
  const before = (await server.usage()).cpuUs;
  if (profile) await server.profileStart();
  const result = await work();
  const n = Math.max(1, calls(result));
  const cpuUs = ((await server.usage()).cpuUs - before) / n;
  if (profile) {
    const { printProfile, summarizeProfile } = await import('./profile');
    const file = await server.profileStop(path.join(RESULTS_DIR, 'profiles', `${profile.file}.cpuprofile`));
    printProfile(profile.title, summarizeProfile(file, REPO_ROOT, 25), n);
  }
  return { result, cpuUs };
}

/** A closed loop on `server` after a warm-up of the same, with the server's CPU per request (µs). */
export async function serverLoop(
  server: ServerHandle,
  target: Target,
  o: { connections: number; durationMs: number; warmupMs: number },
): Promise<{ run: RunResult; cpuUs: number }> {
  if (o.warmupMs) await closedLoop(target, { connections: o.connections, durationMs: o.warmupMs });
  const { result, cpuUs } = await withServerCpu(
    server,
    () => closedLoop(target, o),
    (r) => r.requests,
  );
  return { run: result, cpuUs };
}
