import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import { freePort } from '../../tooling/ports';
import type { ClusterDatabase, TemporalCluster } from '../../tooling/temporalCluster';

// A bench's Temporal: the dev server (in memory, or on a SQLite file surviving a restart) or the
// cluster tier (tooling/temporalCluster.ts) on the bench's own databases; its task queues' backlog.

export type TemporalKind = 'dev' | 'cluster';
export type TemporalStore = { kind: 'dev'; file: string | null } | { kind: 'cluster'; db: ClusterDatabase };

export function temporalKind(value: string): TemporalKind {
  if (value !== 'dev' && value !== 'cluster') throw new Error('--temporal must be dev or cluster');
  return value;
}

/** The frontend's port, picked before the environment is set; then `startBenchTemporal` with it. */
export async function reserveTemporal(kind: TemporalKind) {
  const cluster = kind === 'cluster' ? await (await import('../../tooling/temporalCluster')).freeClusterPorts() : null;
  return { cluster, port: cluster ? cluster.frontend : await freePort() };
}

type Running = {
  pids(): number[];
  stop(): Promise<void>;
  kill(): Promise<void>;
  revive(): Promise<Running>;
  cluster: TemporalCluster | null;
};

/**
 * Temporal started: `stop` (SIGTERM) or `kill` (SIGKILL), `start` again on the same state, `dispose`
 * stops it and removes its state (the cluster's databases, the dev server's file, with `dbFile`).
 */
export async function startBenchTemporal(
  reserved: Awaited<ReturnType<typeof reserveTemporal>>,
  opts: { databaseUrl: string; databaseName: string; fairness?: boolean; dbFile?: boolean; log?: (line: string) => void },
) {
  const { port, cluster: ports } = reserved;
  const address = `127.0.0.1:${port}`;
  let launch: () => Promise<Running>;
  let remove: () => Promise<void>;
  let store: TemporalStore;
  if (ports) {
    // Fairness is always on in the cluster's dynamic config (tooling/temporal-cluster/dynamicconfig.yaml).
    const { startTemporalCluster, dropClusterDatabases, clusterDatabase } = await import('../../tooling/temporalCluster');
    const { databaseUrl, databaseName } = opts;
    const db = clusterDatabase(databaseUrl, databaseName);
    let fresh = true;
    store = { kind: 'cluster', db };
    remove = () => dropClusterDatabases(db);
    launch = async () => {
      const cluster = await startTemporalCluster({ databaseUrl, databaseName, fresh, ports, log: () => {} });
      fresh = false;
      const services = Object.values(cluster.services);
      const kill = async () => void (await Promise.all(services.map((s) => s.kill())));
      // Revived one service at a time, in the safe order (frontend first).
      const revive = async () => {
        for (const s of services) await s.restart();
        return running;
      };
      const running: Running = { pids: () => cluster.pids(), stop: () => cluster.stop(), kill, revive, cluster };
      return running;
    };
  } else {
    const { resolveTemporalBinary, startTemporalDevServer } = await import('../../tooling/temporalBinary');
    const binary = await resolveTemporalBinary(opts.log ? { log: opts.log } : undefined);
    const dir = opts.dbFile ? fs.mkdtempSync(path.join(os.tmpdir(), 'bench-temporal-')) : null;
    const dbFile = dir && path.join(dir, 'temporal.db');
    store = { kind: 'dev', file: dbFile };
    remove = async () => void (dir && fs.rmSync(dir, { recursive: true, force: true }));
    const { fairness } = opts;
    launch = async () => {
      const s = await startTemporalDevServer({ binary, port, uiPort: null, dbFile, log: () => {}, fairness, readyTimeoutMs: 180_000 });
      const kill = async () => void (s.child.kill('SIGKILL'), await s.exited);
      return { pids: () => (s.child.pid ? [s.child.pid] : []), stop: () => s.stop(), kill, cluster: null, revive: launch };
    };
  }
  let running: Running | null = await launch();
  let killed = false;
  const t = {
    address,
    store,
    /** The cluster's services (each can be killed and restarted on its own); null for the dev server. */
    get cluster() {
      return running?.cluster ?? null;
    },
    /** Process ids now running (the CPU group "temporal"). */
    pids: () => running?.pids() ?? [],
    /** The cluster's two databases; none for the dev server. */
    databases: store.kind === 'cluster' ? [store.db.name, store.db.visibilityName] : [],
    describe:
      store.kind === 'cluster'
        ? `Temporal cluster ${address}: frontend, history, matching, worker pids ${running.pids().join(', ')} on Postgres`
        : `Temporal dev server (${store.file ? 'on a SQLite file' : 'in memory'}) ${address}, pid ${running.pids()[0]}`,
    /** Started again on the same state (after a kill: the dev server on its file, the cluster's services in order). */
    async start() {
      if (!running || killed) running = running ? await running.revive() : await launch();
      killed = false;
    },
    async stop() {
      await running?.stop();
      running = null;
    },
    /** SIGKILL, as a crash would end it (every service of the cluster). */
    async kill() {
      await running?.kill();
      killed = true;
    },
    async dispose() {
      await t.stop();
      await remove();
    },
  };
  return t;
}

/** Tasks waiting in a task queue, workflow and activity halves (a worker's sticky queue not counted). */
export async function backlog(connection: Connection, taskQueue: string): Promise<number> {
  let total = 0;
  for (const taskQueueType of [1, 2]) {
    const req = { namespace: 'default', taskQueue: { name: taskQueue, kind: 1 }, taskQueueType, reportStats: true };
    // approximateBacklogCount is a Long: Number() reads its decimal text.
    total += Number((await connection.workflowService.describeTaskQueue(req)).stats?.approximateBacklogCount ?? 0);
  }
  return total;
}

/** When the task queue went empty, once it has stayed empty for 2 s; null if not before `deadlineMs`. */
export async function quietSince(connection: Connection, taskQueue: string, deadlineMs: number): Promise<number | null> {
  let zeroSince: number | null = null;
  while (Date.now() < deadlineMs) {
    zeroSince = (await backlog(connection, taskQueue)) === 0 ? (zeroSince ?? Date.now()) : null;
    if (zeroSince !== null && Date.now() - zeroSince >= 2_000) return zeroSince;
    await sleep(250);
  }
  return null;
}

/** Until the task queue has stayed empty for 2 s; false after `timeoutMs`. */
export async function idle(connection: Connection, taskQueue: string, timeoutMs: number): Promise<boolean> {
  return (await quietSince(connection, taskQueue, Date.now() + timeoutMs)) !== null;
}
