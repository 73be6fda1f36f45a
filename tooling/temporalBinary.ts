// Finding, building and running the `temporal` CLI, which provides the embedded dev server that
// `npm start` and the integration tests use when TEMPORAL_ADDRESS is unset.
//
// The binary is resolved rather than downloaded at install time because the machines this runs
// on may have no internet access; a Go toolchain plus the module cache is enough to build it.

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Connection as TemporalConnection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_KEYS, searchAttributeFlags } from '../lib/searchAttributes';
import { portAcceptsConnections } from './ports';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
export const TEMPORAL_CLI_VERSION = 'v1.5.1';

export type LogFn = (line: string) => void;

const defaultLog: LogFn = (line) => process.stderr.write(`${line}\n`);

export class TemporalBinaryNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemporalBinaryNotFoundError';
  }
}

/** Where a built CLI is kept: outside the repo, so fresh clones and `npm ci` reuse it. */
export function temporalCacheDir(): string {
  const base =
    process.env.XDG_CACHE_HOME && path.isAbsolute(process.env.XDG_CACHE_HOME)
      ? process.env.XDG_CACHE_HOME
      : path.join(os.homedir(), '.cache');
  return path.join(base, 'content-scheduler', 'bin');
}

export function binaryName(name: string): string {
  return process.platform === 'win32' ? `${name}.exe` : name;
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH, or null. */
export function findOnPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, binaryName(name));
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

export function findGo(): string | null {
  const onPath = findOnPath('go');
  if (onPath) return onPath;
  // Non-login shells (CI runners, IDE terminals) often lack the tarball install's bin dir.
  for (const candidate of [process.env.GOROOT ? path.join(process.env.GOROOT, 'bin', binaryName('go')) : null, '/usr/local/go/bin/go']) {
    if (candidate && isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * Absolute path of the `temporal` CLI: TEMPORAL_CLI_PATH, else `temporal` on PATH, else the
 * cache folder, else built there with `go install`. Throws TemporalBinaryNotFoundError when none
 * of these is possible so callers can fall back to the SDK's download (machines with internet).
 */
export async function resolveTemporalBinary(opts: { log?: LogFn } = {}): Promise<string> {
  const log = opts.log ?? defaultLog;

  const explicit = process.env.TEMPORAL_CLI_PATH;
  if (explicit) {
    const abs = path.resolve(explicit);
    // An explicit setting that silently falls through to another binary would hide typos.
    if (!isExecutableFile(abs)) {
      throw new TemporalBinaryNotFoundError(`TEMPORAL_CLI_PATH: ${abs} does not exist or is not an executable file.`);
    }
    return abs;
  }

  const onPath = findOnPath('temporal');
  if (onPath) return onPath;

  const cacheDir = temporalCacheDir();
  const cached = path.join(cacheDir, binaryName('temporal'));
  if (isExecutableFile(cached)) return cached;

  const go = findGo();
  if (!go) {
    throw new TemporalBinaryNotFoundError(
      'The Temporal CLI was not found: install it (https://docs.temporal.io/cli, e.g. `brew install temporal`), ' +
        `put \`temporal\` on PATH, set TEMPORAL_CLI_PATH, or install Go so \`npm run temporal:install\` can build it into ${cacheDir}.`,
    );
  }
  await buildWithGo(go, cacheDir, cached, log);
  return cached;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM means the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Take the build lock, or wait for whoever holds it. Returns false when another process
 * finished the build while we waited, so there is nothing left to do.
 */
export async function acquireBuildLock(lockFile: string, target: string, log: LogFn): Promise<boolean> {
  let announced = false;
  for (;;) {
    try {
      const fh = await fsp.open(lockFile, 'wx');
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (isExecutableFile(target)) return false;
    const holder = Number.parseInt(await fsp.readFile(lockFile, 'utf8').catch(() => ''), 10);
    if (!Number.isInteger(holder) || holder <= 0) {
      // The holder may be between creating and writing the file; only treat it as stale once
      // it has stayed empty for a while.
      const age = await fsp
        .stat(lockFile)
        .then((s) => Date.now() - s.mtimeMs)
        .catch(() => 0);
      if (age > 10_000) await fsp.rm(lockFile, { force: true });
      else await sleep(500);
      continue;
    }
    if (!pidAlive(holder)) {
      // A build killed midway leaves its lock behind; the staging dir it used is harmless.
      await fsp.rm(lockFile, { force: true });
      continue;
    }
    if (!announced) {
      log(`waiting for another process (pid ${holder}) that is building the Temporal CLI into ${path.dirname(target)}`);
      announced = true;
    }
    await sleep(2_000);
  }
}

async function buildWithGo(go: string, cacheDir: string, target: string, log: LogFn): Promise<void> {
  await fsp.mkdir(cacheDir, { recursive: true });
  const lockFile = path.join(cacheDir, '.temporal-build.lock');
  if (!(await acquireBuildLock(lockFile, target, log))) return;
  // Build into a private staging dir and rename, so a concurrent reader never sees a
  // half-written binary at the final path and an interrupted build leaves nothing behind there.
  const staging = await fsp.mkdtemp(path.join(cacheDir, '.staging-'));
  try {
    if (isExecutableFile(target)) return;
    const version = TEMPORAL_CLI_VERSION.replace(/^v/, '');
    log(`building the Temporal CLI ${TEMPORAL_CLI_VERSION} with go install (takes a few minutes, once) into ${cacheDir}`);
    const args = [
      'install',
      // Same flags as the upstream release build: a static binary that reports its real version.
      `-ldflags=-s -w -X github.com/temporalio/cli/temporalcli.Version=${version}`,
      `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`,
    ];
    const child = spawn(go, args, {
      env: { ...process.env, GOBIN: staging, CGO_ENABLED: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    const forward = (stream: NodeJS.ReadableStream | null) => {
      if (!stream) return;
      createInterface({ input: stream }).on('line', (line) => {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        log(`go: ${line.replace(/^go: /, '')}`);
      });
    };
    forward(child.stdout);
    forward(child.stderr);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, signal) => resolve(signal ? null : c));
    });
    const built = path.join(staging, binaryName('temporal'));
    if (code !== 0 || !isExecutableFile(built)) {
      throw new TemporalBinaryNotFoundError(
        `go install ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION} failed (exit ${code ?? 'by signal'}); ` +
          `install the Temporal CLI yourself or set TEMPORAL_CLI_PATH. Last output: ${tail.slice(-3).join(' | ')}`,
      );
    }
    await fsp.rename(built, target);
    log(`built ${target}`);
  } finally {
    await fsp.rm(staging, { recursive: true, force: true });
    await fsp.rm(lockFile, { force: true });
  }
}

/** `temporal --version` output, e.g. "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)". */
export async function temporalVersion(binary: string): Promise<string> {
  const child = spawn(binary, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
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

export function devServerArgs(opts: Pick<DevServerOptions, 'port' | 'uiPort' | 'dbFile' | 'namespace' | 'ip'>): string[] {
  const args = ['server', 'start-dev', '--ip', opts.ip ?? '127.0.0.1', '--port', String(opts.port)];
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  else args.push('--headless');
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  // "default" always exists; naming it again is accepted and keeps the call uniform.
  args.push('--namespace', opts.namespace ?? 'default');
  // The custom search attributes, from their one declaration (lib/searchAttributes.ts).
  for (const flag of searchAttributeFlags()) args.push('--search-attribute', flag);
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

  const child = spawn(opts.binary, devServerArgs({ ...opts, ip, namespace }), {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });

  let stopping = false;
  const tail: string[] = [];
  const forward = (stream: NodeJS.ReadableStream | null) => {
    if (!stream) return;
    createInterface({ input: stream }).on('line', (line) => {
      tail.push(line);
      if (tail.length > 30) tail.shift();
      // Shutdown makes the server's internal workers log a burst of connection warnings that
      // say nothing useful about this process.
      if (!stopping) log(line);
    });
  };
  forward(child.stdout);
  forward(child.stderr);

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  // 'close' comes after the output streams end, so an early-exit message carries the last lines.
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

  // Leaving a detached server behind would hold its ports and the SQLite file.
  const killOnExit = () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  };
  process.once('exit', killOnExit);

  const stop = async (): Promise<void> => {
    stopping = true;
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await waitForFrontend({
      address,
      namespace,
      timeoutMs: opts.readyTimeoutMs ?? 60_000,
      abort: Promise.race([
        closed.then(
          ({ code, signal }) =>
            new Error(
              `temporal server start-dev exited (${signal ?? `code ${code}`}) before it was ready. Last output:\n${tail.join('\n')}`,
            ),
        ),
        spawnError.then((err) => new Error(`cannot run ${opts.binary}: ${err.message}`)),
      ]),
    });
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    address,
    uiUrl: opts.uiPort ? `http://${ip === '0.0.0.0' ? '127.0.0.1' : ip}:${opts.uiPort}` : null,
    child,
    exited,
    stop,
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
export async function startDownloadedDevServer(opts: {
  port: number;
  uiPort?: number | null;
  dbFile?: string | null;
  namespace?: string;
  ip?: string;
  /** For tests of this path: run a given binary through the same SDK machinery. */
  existingPath?: string;
}): Promise<SdkDevServer> {
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
