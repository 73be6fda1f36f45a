import fs from 'node:fs';
import type { Server } from 'node:http';
import inspector from 'node:inspector';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PerformanceObserver, constants as perf } from 'node:perf_hooks';

// The child side of a bench server (servers.ts): one process per server, each with a whole event
// loop to itself, driven over IPC by named calls. The profiler runs on request, over the measured window only.

export type ParentMessage = { type: 'call'; name: string; args?: unknown } | { type: 'stop' };
export type ChildMessage = { type: 'listening'; port: number } | { type: 'called'; name: string; result?: unknown; error?: string };

// Cumulative garbage-collection pauses of this process by kind: with what a request allocates
// (minor) or how long it holds it (major) GC grows, and the kind says which.
const gc = { minorCount: 0, minorMs: 0, majorCount: 0, majorMs: 0, otherCount: 0, otherMs: 0 };
export type GcStats = typeof gc;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
    const k = kind === perf.NODE_PERFORMANCE_GC_MINOR ? 'minor' : kind === perf.NODE_PERFORMANCE_GC_MAJOR ? 'major' : 'other';
    gc[`${k}Count`]++;
    gc[`${k}Ms`] += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

export function serveUnderParent(
  server: Server,
  opts: { onStop?: () => Promise<void>; calls?: Record<string, (args: unknown) => Promise<unknown>> } = {},
): void {
  if (!process.send) throw new Error('bench servers run as forked children of a bench (bench/run.ts)');
  const send = (m: ChildMessage) => process.send!(m);
  let session: inspector.Session;
  const post = (method: string, params: object = {}): Promise<any> =>
    new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  const stop = async () => {
    server.closeAllConnections();
    server.close();
    await opts.onStop?.().catch(() => undefined);
    process.exit(0);
  };
  const calls: Record<string, (args: any) => Promise<unknown>> = {
    cpu: async () => {
      const u = process.cpuUsage();
      return { cpuUs: u.user + u.system, gc: { ...gc }, heapUsedBytes: process.memoryUsage().heapUsed };
    },
    'profile-start': async (o: { survivorsOnly?: boolean }) => {
      session = new inspector.Session();
      session.connect();
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 250 });
      await post('Profiler.start');
      // Allocation sampling alongside (who allocates pays the GC time), collected objects kept;
      // survivorsOnly drops what scavenges freed, leaving what they had to copy and promote.
      await post('HeapProfiler.enable');
      await post('HeapProfiler.startSampling', {
        samplingInterval: 16_384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: !o.survivorsOnly,
      });
    },
    'profile-stop': async ({ file }: { file: string }) => {
      const { profile: heap } = await post('HeapProfiler.stopSampling');
      const { profile } = await post('Profiler.stop');
      session.disconnect();
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(profile));
      fs.writeFileSync(file.replace(/\.cpuprofile$/, '') + '.heapprofile', JSON.stringify(heap));
      return file;
    },
    ...opts.calls,
  };
  process.on('message', async (m: ParentMessage) => {
    if (m.type === 'stop') return stop();
    try {
      if (!calls[m.name]) throw new Error(`no call "${m.name}" in this server`);
      send({ type: 'called', name: m.name, result: await calls[m.name]!(m.args) });
    } catch (err) {
      send({ type: 'called', name: m.name, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  });
  // A bench that dies must not leave servers holding ports and database connections.
  process.on('disconnect', () => void stop());
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => send({ type: 'listening', port: (server.address() as AddressInfo).port }));
}
