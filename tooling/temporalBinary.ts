// Finding, building and running the `temporal` CLI, which provides the embedded dev server that
// `npm start` and the integration tests use when TEMPORAL_ADDRESS is unset (the shared steps:
// tooling/serverProcess.ts).

import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Connection as TemporalConnection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_KEYS, searchAttributeFlags } from '../lib/searchAttributes';
import { portAcceptsConnections } from './ports';
import { binaryCacheDir, defaultLog, resolveGoBinary, runToEnd, spawnServer, type GoBinary, type LogFn } from './serverProcess';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';

export { acquireBuildLock, binaryName, findGo, findOnPath, isExecutableFile, type LogFn } from './serverProcess';

/** Where a built CLI is kept: outside the repo, so fresh clones and `npm ci` reuse it. */
export const temporalCacheDir = binaryCacheDir;

const TEMPORAL_CLI: GoBinary = {
  name: 'temporal',
  label: 'the Temporal CLI',
  pathVar: 'TEMPORAL_CLI_PATH',
  module: 'github.com/temporalio/cli/cmd/temporal',
  version: TEMPORAL_CLI_VERSION,
  // Same flags as the upstream release build: a static binary that reports its real version.
  ldflags: `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION.replace(/^v/, '')}`,
  installScript: 'npm run temporal:install',
  instead: 'install it (https://docs.temporal.io/cli, e.g. `brew install temporal`)',
};

/**
 * Absolute path of the `temporal` CLI: TEMPORAL_CLI_PATH, else `temporal` on PATH, else the
 * cache folder, else built there with `go install`. Throws BinaryNotFoundError when none
 * of these is possible so callers can fall back to the SDK's download (machines with internet).
 */
export async function resolveTemporalBinary(opts: { log?: LogFn } = {}): Promise<string> {
  return resolveGoBinary(TEMPORAL_CLI, opts.log ?? defaultLog);
}

/** `temporal --version` output, e.g. "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)". */
export async function temporalVersion(binary: string): Promise<string> {
  const { code, out } = await runToEnd(binary, ['--version']);
  if (code !== 0) throw new Error(`${binary} --version exited ${code}: ${out.trim()}`);
  return out.trim();
}

export interface DevServerOptions {
  binary: string;
  port: number;
  /** Web UI port; null or undefined runs headless. */
  uiPort?: number | null;
  /** SQLite file for state that survives restarts; null or undefined keeps state in memory. */
  dbFile?: string | null;
  namespace?: string;
  ip?: string;
  log?: LogFn;
  /** How long to wait for the frontend to serve the namespace. */
  readyTimeoutMs?: number;
  /**
   * Put the server in its own process group so a terminal's Ctrl-C reaches only the parent,
   * which can then stop the processes that use Temporal before Temporal itself.
   */
  detached?: boolean;
  /**
   * Task queue fairness (matching.enableFairness) on, as in production; false only for a
   * measurement of the first-come-first-served queue before it (bench/fairness.ts --no-fairness).
   */
  fairness?: boolean;
}

export interface DevServer {
  /** host:port of the gRPC frontend, the value for TEMPORAL_ADDRESS. */
  address: string;
  uiUrl: string | null;
  child: ChildProcess;
  /** Resolves when the process has exited, whoever stopped it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

export function devServerArgs(opts: Pick<DevServerOptions, 'port' | 'uiPort' | 'dbFile' | 'namespace' | 'ip' | 'fairness'>): string[] {
  const args = ['server', 'start-dev', '--ip', opts.ip ?? '127.0.0.1', '--port', String(opts.port)];
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  else args.push('--headless');
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  // "default" always exists; naming it again is accepted and keeps the call uniform.
  args.push('--namespace', opts.namespace ?? 'default');
  // The custom search attributes, from their one declaration (lib/searchAttributes.ts).
  for (const flag of searchAttributeFlags()) args.push('--search-attribute', flag);
  // Eager activity dispatch: a workflow task that schedules an activity on its own task queue
  // gets the activity task back in the same answer when the worker has a free slot, instead of
  // a second trip through matching and a poll (the generation writer, the publish step).
  // Production clusters set the same dynamic config key (docs/operations.md).
  args.push('--dynamic-config-value', 'system.enableActivityEagerExecution=true');
  // Task queue fairness (docs/operations.md "Fairness between workspaces"): matching dispatches
  // each priority level's tasks by fairness key (the workspace, lib/temporal/contracts/priority.ts)
  // in proportion to its weight, not first come, first served. It implies the new matcher.
  // The cluster's dynamic config sets the same key (tooling/temporal-cluster/dynamicconfig.yaml).
  if (opts.fairness ?? true) args.push('--dynamic-config-value', 'matching.enableFairness=true');
  // One partition per task queue: fairness orders each partition's tasks apart, and with the jobs
  // queue's few pollers a quiet workspace's task on a partition polled less often waited seconds
  // behind a burst on another (bench/README.md "fairness"). Partitions spread matching over hosts;
  // a dev server is one process, so they buy it nothing. The cluster sets this for the jobs queue
  // only (tooling/temporal-cluster/dynamicconfig.yaml).
  args.push('--dynamic-config-value', 'matching.numTaskqueueReadPartitions=1');
  args.push('--dynamic-config-value', 'matching.numTaskqueueWritePartitions=1');
  // Few history workers: the dev server's SQLite store has one connection, handed to its waiters
  // in random order, and with the default 512 timer and 512 transfer workers a burst's firing
  // (one workspace's 10,000 posts at 9:00) filled the queue for it, so matching could not record
  // a task started and dispatched almost nothing until the whole burst was fired (27 s). With 8
  // and 8 dispatching goes on beside the firing (docs/operations.md "Fairness between workspaces").
  args.push('--dynamic-config-value', 'history.timerProcessorSchedulerWorkerCount=8');
  args.push('--dynamic-config-value', 'history.transferProcessorSchedulerWorkerCount=8');
  args.push('--log-level', 'warn');
  return args;
}

/**
 * Run `temporal server start-dev` and resolve once the namespace can be described, so callers
 * can start workers and clients right away.
 */
export async function startTemporalDevServer(opts: DevServerOptions): Promise<DevServer> {
  const log = opts.log ?? defaultLog;
  const ip = opts.ip ?? '127.0.0.1';
  const namespace = opts.namespace ?? 'default';
  const address = `${ip}:${opts.port}`;

  // The dev server's own message for a taken port is buried in Go log noise; say it plainly,
  // and catch the common case of a server left over from an earlier run.
  for (const p of [opts.port, opts.uiPort]) {
    if (p && (await portAcceptsConnections(p, ip))) {
      throw new Error(
        `port ${p} on ${ip} is already in use (a Temporal server left running?). ` +
          `Stop it, point TEMPORAL_ADDRESS at it, or choose other ports (TEMPORAL_PORT, TEMPORAL_UI_PORT).`,
      );
    }
  }
  if (opts.dbFile) await fsp.mkdir(path.dirname(path.resolve(opts.dbFile)), { recursive: true });

  const server = spawnServer(opts.binary, devServerArgs({ ...opts, ip, namespace }), {
    what: 'temporal server start-dev',
    log,
    detached: opts.detached,
    stopGraceMs: 10_000,
  });
  try {
    await waitForFrontend({ address, namespace, timeoutMs: opts.readyTimeoutMs ?? 60_000, abort: server.failed });
  } catch (err) {
    await server.stop();
    throw err;
  }

  return {
    address,
    uiUrl: opts.uiPort ? `http://${ip === '0.0.0.0' ? '127.0.0.1' : ip}:${opts.uiPort}` : null,
    child: server.child,
    exited: server.exited,
    stop: server.stop,
  };
}

/**
 * Poll until the frontend answers DescribeNamespace. A bare TCP connect is not enough: the
 * port opens before the namespace and search attributes are registered.
 */
export async function waitForFrontend(opts: {
  address: string;
  namespace?: string;
  timeoutMs?: number;
  abort?: Promise<Error>;
}): Promise<void> {
  const { Connection } = await import('@temporalio/client');
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const [host, portText] = splitAddress(opts.address);
  // An object rather than a local so the check below is not narrowed away by the compiler.
  const state: { aborted: Error | null } = { aborted: null };
  opts.abort?.then((err) => (state.aborted = err));
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    if (state.aborted) throw state.aborted;
    if (await portAcceptsConnections(Number(portText), host, 500)) {
      let connection: TemporalConnection | null = null;
      try {
        connection = await Connection.connect({ address: opts.address, connectTimeout: 2_000 });
        await connection.workflowService.describeNamespace({ namespace: opts.namespace ?? 'default' });
        return;
      } catch (err) {
        lastError = err;
      } finally {
        await connection?.close().catch(() => undefined);
      }
    }
    if (state.aborted) throw state.aborted;
    await sleep(250);
  }
  throw new Error(
    `Temporal at ${opts.address} was not ready after ${Math.round((opts.timeoutMs ?? 60_000) / 1000)} s` +
      (lastError instanceof Error ? `: ${lastError.message}` : ''),
  );
}

function splitAddress(address: string): [string, string] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i).replace(/^\[|\]$/g, ''), address.slice(i + 1)];
}

export interface SdkDevServer {
  address: string;
  uiUrl: string | null;
  stop(): Promise<void>;
}

/**
 * Start a dev server through @temporalio/testing, which downloads the CLI itself. Used only
 * when resolveTemporalBinary finds nothing, because it needs internet access and the testing
 * package (a dev dependency), and its output cannot be prefixed like a child we spawn.
 */
export async function startDownloadedDevServer(
  opts: Pick<DevServerOptions, 'port' | 'uiPort' | 'dbFile' | 'namespace' | 'ip'> & {
    /** For tests of this path: run a given binary through the same SDK machinery. */
    existingPath?: string;
  },
): Promise<SdkDevServer> {
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const ip = opts.ip ?? '127.0.0.1';
  if (opts.dbFile) await fsp.mkdir(path.dirname(path.resolve(opts.dbFile)), { recursive: true });
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: opts.existingPath
        ? { type: 'existing-path', path: opts.existingPath }
        : { type: 'cached-download', downloadDir: temporalCacheDir() },
      ip,
      port: opts.port,
      ui: !!opts.uiPort,
      ...(opts.uiPort ? { uiPort: opts.uiPort } : {}),
      ...(opts.dbFile ? { dbFilename: opts.dbFile } : {}),
      namespace: opts.namespace ?? 'default',
      searchAttributes: [...SEARCH_ATTRIBUTE_KEYS],
    },
  });
  return {
    address: `${ip}:${opts.port}`,
    uiUrl: opts.uiPort ? `http://${ip}:${opts.uiPort}` : null,
    stop: () => env.teardown(),
  };
}
