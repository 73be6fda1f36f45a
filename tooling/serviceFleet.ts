// The service scaled out (docs/operations.md "The cluster tier"): N API processes and M worker
// processes, each on its own ports, sharing Postgres, Redis, the object store and Temporal
// through the environment they are given. Each child runs with the Node options its npm script
// gives it (lib/apiRuntime.ts, lib/config.ts workerNodeArgs) in its own process group, so a stop
// also reaches anything it spawned.

import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { API_NODE_ARGS } from '../lib/apiRuntime';
import { workerNodeArgs } from '../lib/config';
import { portAcceptsConnections } from './ports';
import { defaultLog, sleep, type LogFn } from './serverProcess';

const ROOT = path.resolve(import.meta.dirname, '..');
// tsx as a loader, not its CLI wrapper: one process per child, which gets every signal once
// (the same reasoning as bin/start.ts).
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const STOP_GRACE_MS = 15_000;

export interface FleetProcess {
  kind: 'api' | 'worker';
  /** 1-based, per kind: "api 2" is the second API process. */
  index: number;
  child: ChildProcess;
  /** REST port (APIs only). */
  port?: number;
  mcpPort?: number;
  metricsPort: number;
  exited: Promise<void>;
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

export const isRunning = (child: ChildProcess) => child.pid !== undefined && child.exitCode === null && child.signalCode === null;

function spawnChild(kind: 'api' | 'worker', index: number, env: NodeJS.ProcessEnv, log: LogFn): Omit<FleetProcess, 'metricsPort'> {
  const script = kind === 'api' ? 'api/main.ts' : 'workers/main.ts';
  const nodeArgs = kind === 'api' ? [...API_NODE_ARGS] : workerNodeArgs();
  const child = spawn(process.execPath, [...nodeArgs, '--import', TSX_LOADER, path.join(ROOT, script)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const tail: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream! }).on('line', (line) => {
      tail.push(line);
      if (tail.length > 30) tail.shift();
      log(`${kind} ${index}: ${line}`);
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { kind, index, child, exited, tail };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

async function stopProcess(p: FleetProcess): Promise<void> {
  if (!isRunning(p.child)) {
    // The process is gone; anything it spawned in its group goes with it.
    killGroup(p.child, 'SIGKILL');
    return;
  }
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => killGroup(p.child, 'SIGKILL'), STOP_GRACE_MS);
  await p.exited;
  clearTimeout(timer);
  killGroup(p.child, 'SIGKILL');
}

/**
 * Starts the APIs first, one by one (the first migrates the database; the others find it done),
 * then the workers, so no activity meets a schema still being created. Resolves once every API
 * listens; workers are started, not waited for (they register with Temporal on their own time).
 */
export async function startFleet(opts: FleetOptions): Promise<Fleet> {
  const log = opts.log ?? defaultLog;
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const all: FleetProcess[] = [];
  const fleet: Fleet = {
    apis: [],
    workers: [],
    pids: () => all.filter((p) => isRunning(p.child)).map((p) => p.child.pid!),
    restart: async (like) => {
      const p =
        like.kind === 'api'
          ? await startApi(like.index, { port: like.port!, mcpPort: like.mcpPort!, metricsPort: like.metricsPort })
          : startWorker(like.index, like.metricsPort);
      const list = like.kind === 'api' ? fleet.apis : fleet.workers;
      list[list.indexOf(like)] = p;
      return p;
    },
    stop: async () => {
      // Workers and APIs stop together: each drains on its own.
      await Promise.all(all.map(stopProcess));
    },
  };
  process.once('exit', () => {
    for (const p of all) killGroup(p.child, 'SIGKILL');
  });

  const startApi = async (index: number, ports: ApiPorts): Promise<FleetProcess> => {
    const p: FleetProcess = {
      ...spawnChild(
        'api',
        index,
        { ...opts.env, PORT: String(ports.port), MCP_PORT: String(ports.mcpPort), METRICS_PORT: String(ports.metricsPort) },
        log,
      ),
      port: ports.port,
      mcpPort: ports.mcpPort,
      metricsPort: ports.metricsPort,
    };
    all.push(p);
    const deadline = Date.now() + readyTimeoutMs;
    while (!(await portAcceptsConnections(ports.port))) {
      if (!isRunning(p.child)) throw new Error(`api ${index} exited before listening on ${ports.port}:\n${p.tail.join('\n')}`);
      if (Date.now() > deadline) throw new Error(`api ${index} not listening on ${ports.port} after ${readyTimeoutMs / 1000} s`);
      await sleep(200);
    }
    return p;
  };
  const startWorker = (index: number, metricsPort: number): FleetProcess => {
    const p: FleetProcess = { ...spawnChild('worker', index, { ...opts.env, WORKER_METRICS_PORT: String(metricsPort) }, log), metricsPort };
    all.push(p);
    return p;
  };

  try {
    for (const [i, ports] of opts.apis.entries()) fleet.apis.push(await startApi(i + 1, ports));
    for (const [i, metricsPort] of opts.workers.entries()) fleet.workers.push(startWorker(i + 1, metricsPort));
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
