import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch } from '../../tooling/launcher';
import { REPO_ROOT, RESULTS_DIR } from './format';
import { closedLoop, type Target } from './load';
import type { ChildMessage, GcStats, ParentMessage } from './serverChild';

// The parent side of a bench server (serverChild.ts): launched, ready once it listens, driven over IPC.

export type ServerHandle = Awaited<ReturnType<typeof startServer>>;

export async function startServer(name: string, entry: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []) {
  let port = 0;
  const p = await launch({
    // The real API (serve-app.ts) gets api/main.ts's Node options (lib/apiRuntime.ts); the bare servers Node's defaults.
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
  const { child } = p;
  /** One of the server's calls (serverChild.ts has cpu, profile-start and profile-stop; the server its own). */
  const call = <T>(callName: string, args?: unknown) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => done({ error: 'no answer within 600 s' }), 600_000);
      const onMessage = (m: ChildMessage) => m.type === 'called' && m.name === callName && done(m);
      const done = (m: { result?: unknown; error?: string }) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        if (m.error) reject(new Error(`${name}.${callName}: ${m.error}`));
        else resolve(m.result as T);
      };
      child.on('message', onMessage);
      child.send({ type: 'call', name: callName, args } satisfies ParentMessage);
    });
  return {
    name,
    pid: child.pid!,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    /** CPU time (µs) and GC pauses the server process has had so far, and its live heap now. */
    usage: () => call<{ cpuUs: number; gc: GcStats; heapUsedBytes: number }>('cpu'),
    profileStart: (opts: { survivorsOnly?: boolean } = {}) => call<void>('profile-start', opts),
    profileStop: (file: string) => call<string>('profile-stop', { file }),
    call,
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
export async function serverLoop(server: ServerHandle, target: Target, o: { connections: number; durationMs: number; warmupMs: number }) {
  if (o.warmupMs) await closedLoop(target, { connections: o.connections, durationMs: o.warmupMs });
  const work = () => closedLoop(target, o);
  const { result: run, cpuUs } = await withServerCpu(server, work, (r) => r.requests);
  return { run, cpuUs };
}
