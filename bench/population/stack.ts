import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import pLimit from 'p-limit';
import { startApi, type ApiChild } from '../publishing/creation';
import { startWorker, type WorkerRun } from '../publishing/worker';
import { workerHeapArg } from '../../lib/workerHeap';
import type { ClusterPorts, ClusterDatabase } from '../../tooling/temporalCluster';
import type { WorkspacePlan } from './plan';
import { setTimeout as sleep } from 'node:timers/promises';

// The service as the population bench runs it: Temporal (the dev server on a SQLite file, so
// that its state survives a restart, or the cluster tier on Postgres), the worker
// (workers/main.ts) and the API (api/main.ts) as child processes, each of which can be stopped
// and started again; and the customers they serve.

export type TemporalStore = { kind: 'dev'; file: string } | { kind: 'cluster'; db: ClusterDatabase };

export interface TemporalTier {
  address: string;
  store: TemporalStore;
  /** Process ids now running (the CPU group "temporal"). */
  pids(): number[];
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and deletes its state. */
  dispose(): Promise<void>;
}

/** The dev server on a SQLite file in a temporary folder of its own. */
export async function devServerTier(port: number): Promise<TemporalTier> {
  const { resolveTemporalBinary, startTemporalDevServer } = await import('../../tooling/temporalBinary');
  const binary = await resolveTemporalBinary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'population-temporal-'));
  const file = path.join(dir, 'temporal.db');
  let server: Awaited<ReturnType<typeof startTemporalDevServer>> | null = null;
  const tier: TemporalTier = {
    address: `127.0.0.1:${port}`,
    store: { kind: 'dev', file },
    pids: () => (server?.child.pid ? [server.child.pid] : []),
    async start() {
      server = await startTemporalDevServer({ binary, port, uiPort: null, dbFile: file, log: () => {}, readyTimeoutMs: 180_000 });
    },
    async stop() {
      await server?.stop();
      server = null;
    },
    async dispose() {
      await tier.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return tier;
}

/** The cluster tier (tooling/temporalCluster.ts) on databases of its own; a restart keeps them. */
export async function clusterTier(ports: ClusterPorts, databaseUrl: string): Promise<TemporalTier> {
  const { startTemporalCluster, dropClusterDatabases, clusterDatabase } = await import('../../tooling/temporalCluster');
  const db = clusterDatabase(databaseUrl, 'bench_pop_temporal');
  let cluster: Awaited<ReturnType<typeof startTemporalCluster>> | null = null;
  let fresh = true;
  const tier: TemporalTier = {
    address: `127.0.0.1:${ports.frontend}`,
    store: { kind: 'cluster', db },
    pids: () => cluster?.pids() ?? [],
    async start() {
      cluster = await startTemporalCluster({ databaseUrl, databaseName: 'bench_pop_temporal', fresh, ports, log: () => {} });
      fresh = false;
    },
    async stop() {
      await cluster?.stop();
      cluster = null;
    },
    async dispose() {
      await tier.stop();
      await dropClusterDatabases(db);
    },
  };
  return tier;
}

/** The worker's environment as `npm run start:worker` gives it: the heap limit, the pre-built bundles. */
export function workerEnv(bundles: { service: string; baseline: string }, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${workerHeapArg()}`.trim(),
    WORKFLOW_BUNDLE_PATH: bundles.service,
    BENCH_BASELINE_BUNDLE_PATH: bundles.baseline,
    ...extra,
  };
}

/** The worker and the API, started and stopped together; every incarnation is kept for the report. */
export class ServiceProcesses {
  workers: WorkerRun[] = [];
  apis: ApiChild[] = [];
  constructor(
    private readonly env: NodeJS.ProcessEnv,
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
    const w = await startWorker(this.workers.length + 1, this.env, {
      logDir: this.logDir,
      logName: `population-worker-${this.workers.length + 1}.log`,
      sampleMs: 1000,
    });
    this.workers.push(w);
    const apiStarted = startApi().then((a) => {
      this.apis.push(a);
      return Date.now() - t0;
    });
    await w.waitReady(connection, this.taskQueue);
    const workerReadyMs = Date.now() - t0;
    return { workerReadyMs, apiReadyMs: await apiStarted };
  }

  /** SIGTERM, as a deployment stops them (the worker finishes its tasks), SIGKILL after 15 s. */
  async stop(): Promise<void> {
    const w = this.workers.at(-1);
    const a = this.apis.at(-1);
    await Promise.all([a?.stop(), w?.stop()]);
  }

  /** The worker's resident memory now (KiB), from /proc. */
  rssKiB(): number {
    try {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${this.worker.pid}/status`, 'utf8'));
      return m ? Number(m[1]) : 0;
    } catch {
      return 0;
    }
  }
}

export interface SeededWorkspace {
  id: string;
  apiKey: string;
  projectIds: string[];
}

/**
 * The customers: one BUSINESS workspace per plan entry, its accounts as personal-brand projects
 * in the workspace's zone, each connected with a real simulator token (the connect flow's
 * storeConnectionTokens), and a write key.
 */
export async function seedWorkspaces(
  sim: import('../../sim/network/control').SimulatorControl,
  plan: WorkspacePlan[],
  onProgress?: (done: number) => void,
): Promise<SeededWorkspace[]> {
  const { createWorkspace, issueApiKey } = await import('../../admin/provision');
  const { connectedPersonalProject } = await import('../../admin/simulatedAccounts');
  const out: SeededWorkspace[] = new Array(plan.length);
  let done = 0;
  await pLimit(8).map(plan, async (w) => {
    const ws = await createWorkspace({ name: `Population ${w.index}`, plan: 'BUSINESS' });
    const projectIds: string[] = [];
    for (let a = 0; a < w.accounts; a++) {
      const personId = `pop${w.index}x${a}`;
      const { project } = await connectedPersonalProject(sim, ws.id, {
        personId,
        name: `Person ${w.index}.${a}`,
        vanityName: `person-${w.index}-${a}`,
        timezone: w.timezone,
      });
      projectIds.push(project.id);
    }
    const key = await issueApiKey({ workspaceId: ws.id, scopes: ['write'], name: 'population bench' });
    out[w.index] = { id: ws.id, apiKey: key.key, projectIds };
    if (onProgress && ++done % 100 === 0) onProgress(done);
  });
  return out;
}

/** Waits until `check` holds, polling every `everyMs`; false at the deadline. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs = 1000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}
