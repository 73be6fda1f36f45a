// The embedded S3-compatible store that `npm start` and `npm test` run when S3_ENDPOINT is unset,
// the way they run the Temporal dev server (ARCHITECTURE.md, "The outside world"): the Versity
// S3 gateway (Apache-2.0) serving a plain directory. Its binary is found or built like the
// Temporal CLI: S3_SERVER_PATH → `versitygw` on PATH → the shared cache folder → `go install`.

import { spawn, type ChildProcess } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { acquireBuildLock, binaryName, findGo, findOnPath, isExecutableFile, temporalCacheDir, type LogFn } from './temporalBinary';
import { freePort, portAcceptsConnections } from './ports';

export const S3_SERVER_MODULE = 'github.com/versity/versitygw/cmd/versitygw';
export const S3_SERVER_VERSION = 'v1.8.0';
const BINARY = 'versitygw';

const defaultLog: LogFn = (line) => process.stderr.write(`${line}\n`);

export class S3ServerNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'S3ServerNotFoundError';
  }
}

/** Absolute path of `versitygw`, building it into the cache with Go when nothing else has it. */
export async function resolveS3ServerBinary(opts: { log?: LogFn } = {}): Promise<string> {
  const log = opts.log ?? defaultLog;
  const explicit = process.env.S3_SERVER_PATH;
  if (explicit) {
    const abs = path.resolve(explicit);
    // An explicit setting that silently falls through to another binary would hide typos.
    if (!isExecutableFile(abs)) throw new S3ServerNotFoundError(`S3_SERVER_PATH: ${abs} does not exist or is not an executable file.`);
    return abs;
  }
  const onPath = findOnPath(BINARY);
  if (onPath) return onPath;
  const cacheDir = temporalCacheDir();
  const cached = path.join(cacheDir, binaryName(BINARY));
  if (isExecutableFile(cached)) return cached;
  const go = findGo();
  if (!go) {
    throw new S3ServerNotFoundError(
      `The Versity S3 gateway was not found: set S3_ENDPOINT to use an S3 store, set S3_SERVER_PATH, put \`versitygw\` on PATH, ` +
        `or install Go so \`npm run s3:install\` can build it into ${cacheDir}.`,
    );
  }
  await goInstall(go, cacheDir, cached, log);
  return cached;
}

async function goInstall(go: string, cacheDir: string, target: string, log: LogFn): Promise<void> {
  await fsp.mkdir(cacheDir, { recursive: true });
  const lockFile = path.join(cacheDir, '.versitygw-build.lock');
  if (!(await acquireBuildLock(lockFile, target, log))) return;
  // Staging dir + rename: a concurrent reader never sees a half-written binary.
  const staging = await fsp.mkdtemp(path.join(cacheDir, '.staging-'));
  try {
    if (isExecutableFile(target)) return;
    log(`building the Versity S3 gateway ${S3_SERVER_VERSION} with go install (takes a few minutes, once) into ${cacheDir}`);
    const child = spawn(go, ['install', '-ldflags=-s -w', `${S3_SERVER_MODULE}@${S3_SERVER_VERSION}`], {
      env: { ...process.env, GOBIN: staging, CGO_ENABLED: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        log(`go: ${line.replace(/^go: /, '')}`);
      });
    }
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, signal) => resolve(signal ? null : c));
    });
    const built = path.join(staging, binaryName(BINARY));
    if (code !== 0 || !isExecutableFile(built)) {
      throw new S3ServerNotFoundError(
        `go install ${S3_SERVER_MODULE}@${S3_SERVER_VERSION} failed (exit ${code ?? 'by signal'}); set S3_ENDPOINT or S3_SERVER_PATH. ` +
          `Last output: ${tail.slice(-3).join(' | ')}`,
      );
    }
    await fsp.rename(built, target);
    log(`built ${target}`);
  } finally {
    await fsp.rm(staging, { recursive: true, force: true });
    await fsp.rm(lockFile, { force: true });
  }
}

export interface ObjectStoreServer {
  /** The value for S3_ENDPOINT. */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

export interface StartObjectStoreOptions {
  /** Directory the gateway serves (each top-level folder is a bucket); default a fresh temp dir, removed on stop. */
  dataDir?: string;
  /** 0 or unset picks a free port. */
  port?: number;
  accessKeyId?: string;
  secretAccessKey?: string;
  log?: LogFn;
  /** Own process group, so a terminal's Ctrl-C reaches only the parent (bin/start.ts stops it last). */
  detached?: boolean;
  readyTimeoutMs?: number;
}

/**
 * Runs `versitygw --port 127.0.0.1:<port> posix <dir>` and resolves once it accepts connections.
 * The caller puts `endpoint` and the credentials into S3_ENDPOINT / S3_ACCESS_KEY_ID /
 * S3_SECRET_ACCESS_KEY for the processes that use it.
 */
export async function startObjectStore(opts: StartObjectStoreOptions = {}): Promise<ObjectStoreServer> {
  const log = opts.log ?? defaultLog;
  const binary = await resolveS3ServerBinary({ log });
  const port = opts.port || (await freePort());
  if (await portAcceptsConnections(port)) {
    throw new Error(
      `port ${port} on 127.0.0.1 is already in use (an earlier object store still running?). Stop it, set S3_SERVER_PORT, or set S3_ENDPOINT to use it.`,
    );
  }
  const ownDir = !opts.dataDir;
  const dataDir = opts.dataDir ? path.resolve(opts.dataDir) : await fsp.mkdtemp(path.join(os.tmpdir(), 'object-store-'));
  await fsp.mkdir(dataDir, { recursive: true });
  const accessKeyId = opts.accessKeyId ?? 'dev-s3-access-key';
  const secretAccessKey = opts.secretAccessKey ?? 'dev-s3-secret-key-change-me';

  const child = spawn(binary, ['--port', `127.0.0.1:${port}`, 'posix', dataDir], {
    env: { ...process.env, ROOT_ACCESS_KEY: accessKeyId, ROOT_SECRET_KEY: secretAccessKey },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  const tail: string[] = [];
  let stopping = false;
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      tail.push(line);
      if (tail.length > 30) tail.shift();
      if (!stopping) log(line);
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  // A server left behind would hold its port.
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
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    if (ownDir) await fsp.rm(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  let failure: Error | null = null;
  void exited.then(({ code, signal }) => {
    failure ??= new Error(`versitygw exited (${signal ?? `code ${code}`}) before it was ready. Last output:\n${tail.join('\n')}`);
  });
  void spawnError.then((err) => {
    failure ??= new Error(`cannot run ${binary}: ${err.message}`);
  });
  for (;;) {
    if (failure) {
      await stop();
      throw failure;
    }
    if (await portAcceptsConnections(port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`versitygw did not listen on 127.0.0.1:${port} within ${opts.readyTimeoutMs ?? 30_000} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { endpoint: `http://127.0.0.1:${port}`, accessKeyId, secretAccessKey, child, exited, stop };
}

/** The environment that points the service's processes at a running embedded store. */
export function objectStoreEnv(server: Pick<ObjectStoreServer, 'endpoint' | 'accessKeyId' | 'secretAccessKey'>): Record<string, string> {
  return {
    S3_ENDPOINT: server.endpoint,
    S3_ACCESS_KEY_ID: server.accessKeyId,
    S3_SECRET_ACCESS_KEY: server.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
  };
}
