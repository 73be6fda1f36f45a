// The service scaled out (docs/operations.md "The cluster tier"): N API processes and M worker
// processes, each on its own ports, sharing Postgres, Redis, the object store and Temporal
// through the environment they are given. Each child runs with the Node options its npm script
// gives it (through tooling/launcher.ts) in its own process group, so a stop also reaches
// anything it spawned.

import type { ChildProcess } from 'node:child_process';
import { launch, type Launched } from './launcher';
import { defaultLog, type LogFn } from './serverProcess';

export interface FleetProcess {
  kind: 'api' | 'worker';
  /** 1-based, per kind: "api 2" is the second API process. */
  index: number;
  process: Launched;
  child: ChildProcess;
  /** REST port (APIs only). */
  port?: number;
  mcpPort?: number;
  metricsPort: number;
  /** Last lines of output, for error messages. */
  tail: string[];
}

export interface ApiPorts {
  port: number;
  mcpPort: number;
  metricsPort: number;
}

export interface FleetOptions {
  /** The environment every process shares (database, Redis, Temporal, object store, network). */
  env: NodeJS.ProcessEnv;
  apis: ApiPorts[];
  /** One entry per worker: its WORKER_METRICS_PORT. */
  workers: number[];
  log?: LogFn;
  /** How long an API may take to migrate and listen. */
  readyTimeoutMs?: number;
}

export interface Fleet {
  apis: FleetProcess[];
  workers: FleetProcess[];
  /** Every process id of the fleet now running. */
  pids(): number[];
  /** Starts one more of a kind with the same settings as `like` (after a kill). */
  restart(like: FleetProcess): Promise<FleetProcess>;
  /** SIGTERM to every process, SIGKILL to its group after the grace period. */
  stop(): Promise<void>;
}

/**
 * Starts the APIs first, one by one (the first migrates the database; the others find it done),
 * then the workers, so no activity meets a schema still being created. Resolves once every API
 * listens; workers are started, not waited for (they register with Temporal on their own time).
 */
export async function startFleet(opts: FleetOptions): Promise<Fleet> {
  const log = opts.log ?? defaultLog;
  const all: FleetProcess[] = [];
  const fleet: Fleet = {
    apis: [],
    workers: [],
    pids: () => all.filter((p) => p.process.running()).map((p) => p.process.pid),
    restart: async (like) => {
      const p =
        like.kind === 'api'
          ? await startApi(like.index, { port: like.port!, mcpPort: like.mcpPort!, metricsPort: like.metricsPort })
          : await startWorker(like.index, like.metricsPort);
      const list = like.kind === 'api' ? fleet.apis : fleet.workers;
      list[list.indexOf(like)] = p;
      return p;
    },
    stop: async () => {
      // Workers and APIs stop together: each drains on its own.
      await Promise.all(all.map((p) => p.process.stop()));
    },
  };

  // Each in a process group of its own, so a stop also reaches anything it spawned.
  const start = async (kind: 'api' | 'worker', index: number, env: NodeJS.ProcessEnv, fields: Partial<FleetProcess>) => {
    const p = await launch({
      kind,
      name: `${kind} ${index}`,
      env: { ...opts.env, ...env },
      group: true,
      // The API migrates the database before it listens.
      ...(kind === 'api' ? { ready: { port: Number(env.PORT) }, readyTimeoutMs: opts.readyTimeoutMs ?? 120_000 } : {}),
      tailLines: 30,
      onLine: (line) => log(`${kind} ${index}: ${line}`),
    });
    const fp: FleetProcess = { kind, index, process: p, child: p.child, tail: p.tail, metricsPort: 0, ...fields };
    all.push(fp);
    return fp;
  };
  const startApi = (index: number, ports: ApiPorts) =>
    start('api', index, { PORT: String(ports.port), MCP_PORT: String(ports.mcpPort), METRICS_PORT: String(ports.metricsPort) }, ports);
  const startWorker = (index: number, metricsPort: number) =>
    start('worker', index, { WORKER_METRICS_PORT: String(metricsPort) }, { metricsPort });

  try {
    for (const [i, ports] of opts.apis.entries()) fleet.apis.push(await startApi(i + 1, ports));
    for (const [i, metricsPort] of opts.workers.entries()) fleet.workers.push(await startWorker(i + 1, metricsPort));
  } catch (err) {
    await fleet.stop();
    throw err;
  }
  return fleet;
}

/** True once no process of `pids` (or of its process group) is left. */
export function allGone(pids: number[]): boolean {
  return pids.every((pid) => {
    try {
      process.kill(pid, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code !== 'EPERM' ? true : false;
    }
  });
}
