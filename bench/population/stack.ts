import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import type { reserveTemporal } from '../harness/temporal';
import { startApi, type ApiChild } from '../publishing/creation';
import { startWorker, type WorkerRun } from '../publishing/worker';
import type { ClusterDatabase } from '../../tooling/temporalCluster';

// The service as the population bench runs it: Temporal, the worker and the API, each of which
// can be stopped and started again.

export type TemporalStore = { kind: 'dev'; file: string } | { kind: 'cluster'; db: ClusterDatabase };

/**
 * Temporal for the run, which a restart stops and starts again: the dev server on a SQLite file
 * in a folder of its own (in memory its state would not survive), or the cluster tier
 * (tooling/temporalCluster.ts) on databases of its own. `dispose` stops it and deletes its state.
 */
export async function temporalTier(reserved: Awaited<ReturnType<typeof reserveTemporal>>, databaseUrl: string) {
  type Running = { pids(): number[]; stop(): Promise<void> };
  let start: () => Promise<Running>;
  let remove: () => Promise<void>;
  let store: TemporalStore;
  if (reserved.cluster) {
    const { startTemporalCluster, dropClusterDatabases, clusterDatabase } = await import('../../tooling/temporalCluster');
    const db = clusterDatabase(databaseUrl, 'bench_pop_temporal');
    const ports = reserved.cluster;
    let fresh = true;
    store = { kind: 'cluster', db };
    start = async () => {
      const cluster = await startTemporalCluster({ databaseUrl, databaseName: 'bench_pop_temporal', fresh, ports, log: () => {} });
      fresh = false;
      return cluster;
    };
    remove = () => dropClusterDatabases(db);
  } else {
    const { resolveTemporalBinary, startTemporalDevServer } = await import('../../tooling/temporalBinary');
    const binary = await resolveTemporalBinary();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'population-temporal-'));
    const file = path.join(dir, 'temporal.db');
    store = { kind: 'dev', file };
    const { port } = reserved;
    start = async () => {
      const server = await startTemporalDevServer({ binary, port, uiPort: null, dbFile: file, log: () => {}, readyTimeoutMs: 180_000 });
      return { pids: () => (server.child.pid ? [server.child.pid] : []), stop: () => server.stop() };
    };
    remove = async () => fs.rmSync(dir, { recursive: true, force: true });
  }
  let running: Running | null = null;
  const tier = {
    address: `127.0.0.1:${reserved.port}`,
    store,
    /** Process ids now running (the CPU group "temporal"). */
    pids: () => running?.pids() ?? [],
    start: async () => void (running = await start()),
    async stop() {
      await running?.stop();
      running = null;
    },
    async dispose() {
      await tier.stop();
      await remove();
    },
  };
  return tier;
}

/** The worker and the API, started and stopped together; every incarnation is kept for the report. */
export class ServiceProcesses {
  workers: WorkerRun[] = [];
  apis: ApiChild[] = [];
  constructor(
    readonly env: NodeJS.ProcessEnv,
    private readonly logDir: string,
    private readonly taskQueue: string,
  ) {}

  get worker(): WorkerRun {
    return this.workers.at(-1)!;
  }
  get api(): ApiChild {
    return this.apis.at(-1)!;
  }

  async start(connection: Connection): Promise<{ workerReadyMs: number; apiReadyMs: number }> {
    const t0 = Date.now();
    const n = this.workers.length + 1;
    const w = await startWorker(n, this.env, { logDir: this.logDir, logName: `population-worker-${n}.log`, sampleMs: 1000 });
    this.workers.push(w);
    const apiReadyMs = startApi().then((a) => {
      this.apis.push(a);
      return Date.now() - t0;
    });
    await w.waitReady(connection, this.taskQueue);
    return { workerReadyMs: Date.now() - t0, apiReadyMs: await apiReadyMs };
  }

  /** SIGTERM, as a deployment stops them (the worker finishes its tasks), SIGKILL after 15 s. */
  async stop(): Promise<void> {
    await Promise.all([this.apis.at(-1)?.stop(), this.workers.at(-1)?.stop()]);
  }

  /** The worker's highest sampled resident memory (KiB) from its `from`th sample on. */
  peakRssKiB(from: number): number {
    return Math.max(0, ...this.worker.samples.slice(from).map((s) => s.rssKiB));
  }

  /** The worker's resident memory now (KiB), from /proc. */
  rssKiB(): number {
    try {
      return Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${this.worker.pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return 0;
    }
  }
}
