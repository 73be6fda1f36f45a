// The embedded S3-compatible store that `npm start` and `npm test` run when S3_ENDPOINT is unset,
// the way they run the Temporal dev server (ARCHITECTURE.md, "The outside world"): the Versity
// S3 gateway (Apache-2.0) serving a plain directory. Its binary is found or built like the
// Temporal CLI (tooling/serverProcess.ts): S3_SERVER_PATH → `versitygw` on PATH → the shared
// cache folder → `go install`.

import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, portAcceptsConnections } from './ports';
import { defaultLog, resolveGoBinary, spawnServer, type GoBinary, type LogFn } from './serverProcess';

const S3_SERVER: GoBinary = {
  name: 'versitygw',
  label: 'the Versity S3 gateway',
  pathVar: 'S3_SERVER_PATH',
  module: 'github.com/versity/versitygw/cmd/versitygw',
  version: 'v1.8.0',
  installScript: 'npm run s3:install',
  instead: 'set S3_ENDPOINT to use an S3 store',
};

/** Absolute path of `versitygw`, building it into the cache with Go when nothing else has it. */
export async function resolveS3ServerBinary(opts: { log?: LogFn } = {}): Promise<string> {
  return resolveGoBinary(S3_SERVER, opts.log ?? defaultLog);
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

  const server = spawnServer(binary, ['--port', `127.0.0.1:${port}`, 'posix', dataDir], {
    what: 'versitygw',
    log,
    env: { ...process.env, ROOT_ACCESS_KEY: accessKeyId, ROOT_SECRET_KEY: secretAccessKey },
    detached: opts.detached,
    stopGraceMs: 5_000,
  });
  const stop = async (): Promise<void> => {
    await server.stop();
    if (ownDir) await fsp.rm(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  let failure: Error | null = null;
  void server.failed.then((err) => {
    failure ??= err;
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
    await sleep(100);
  }
  return { endpoint: `http://127.0.0.1:${port}`, accessKeyId, secretAccessKey, child: server.child, exited: server.exited, stop };
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
