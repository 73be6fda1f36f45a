import { freePort } from '../../tooling/ports';
import { setPublishingEnvironment } from './database';
import { waitForQuiet } from './proc';

// The Temporal a bench runs on: the dev server in memory, or the cluster tier
// (tooling/temporalCluster.ts) on fresh databases of the bench's own, dropped at the end.

export type TemporalKind = 'dev' | 'cluster';

export interface BenchTemporal {
  kind: TemporalKind;
  /** host:port of the frontend, for TEMPORAL_ADDRESS. */
  address: string;
  port: number;
  pids(): number[];
  /** The cluster's two databases; none for the dev server. */
  databases: string[];
  /** One line for the bench's set-up log. */
  describe: string;
  stop(): Promise<void>;
}

export function temporalKind(value: string): TemporalKind {
  if (value !== 'dev' && value !== 'cluster') throw new Error('--temporal must be dev or cluster');
  return value;
}

/** The frontend's port, picked before the environment is set; then `startBenchTemporal` with it. */
export async function reserveTemporal(kind: TemporalKind) {
  const { freeClusterPorts } = await import('../../tooling/temporalCluster');
  const cluster = kind === 'cluster' ? await freeClusterPorts() : null;
  return { kind, cluster, port: cluster ? cluster.frontend : await freePort() };
}

/**
 * The start of a bench that runs the service's processes on a Temporal of its own (publishing,
 * population): a quiet machine awaited (`quietWaitS` > 0) before the ports are picked, since a
 * port free minutes ago may not be; then Temporal's and the simulator's ports, and the
 * environment lib/config reads once, at import (the worker and API children inherit it).
 */
export async function reserveServiceBench(o: {
  quietWaitS: number;
  kind: TemporalKind;
  databaseUrl: string;
  redisUrl: string;
  taskQueue: string;
}) {
  const otherAtStart = o.quietWaitS > 0 ? await waitForQuiet({ waitMs: o.quietWaitS * 1000 }) : null;
  const reserved = await reserveTemporal(o.kind);
  const simPort = await freePort();
  setPublishingEnvironment({
    databaseUrl: o.databaseUrl,
    redisUrl: o.redisUrl,
    temporalPort: reserved.port,
    taskQueue: o.taskQueue,
    simPort,
  });
  return { otherAtStart, reserved, simPort };
}

export async function startBenchTemporal(
  reserved: Awaited<ReturnType<typeof reserveTemporal>>,
  opts: { databaseUrl: string; databaseName: string; fairness?: boolean; log?: (line: string) => void },
): Promise<BenchTemporal> {
  const address = `127.0.0.1:${reserved.port}`;
  if (reserved.cluster) {
    const { startTemporalCluster, dropClusterDatabases } = await import('../../tooling/temporalCluster');
    // Fairness is always on in the cluster's dynamic config (tooling/temporal-cluster/dynamicconfig.yaml).
    const { databaseUrl, databaseName } = opts;
    const cluster = await startTemporalCluster({ databaseUrl, databaseName, fresh: true, ports: reserved.cluster, log: () => {} });
    return {
      kind: 'cluster',
      address,
      port: reserved.port,
      pids: () => cluster.pids(),
      databases: [cluster.db.name, cluster.db.visibilityName],
      describe: `Temporal cluster ${address}: frontend, history, matching, worker pids ${cluster.pids().join(', ')} on Postgres`,
      async stop() {
        await cluster.stop();
        await dropClusterDatabases(cluster.db);
      },
    };
  }
  const { resolveTemporalBinary, startTemporalDevServer } = await import('../../tooling/temporalBinary');
  const binary = await resolveTemporalBinary(opts.log ? { log: opts.log } : undefined);
  const { port } = reserved;
  const server = await startTemporalDevServer({ binary, port, uiPort: null, dbFile: null, log: () => {}, fairness: opts.fairness });
  return {
    kind: 'dev',
    address,
    port,
    pids: () => [server.child.pid!],
    databases: [],
    describe: `Temporal dev server (in memory) ${address}, pid ${server.child.pid}`,
    stop: () => server.stop(),
  };
}
