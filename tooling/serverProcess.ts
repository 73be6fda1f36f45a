// What the embedded servers that `npm start` and `npm test` run have in common (the Temporal
// dev server, tooling/temporalBinary.ts; the S3 gateway, tooling/objectStoreServer.ts): finding
// or building their binary, and running one as a child that is stopped with the parent.
//
// Binaries are resolved rather than downloaded at install time because the machines this runs
// on may have no internet access; a Go toolchain plus the module cache is enough to build them.

import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

export type LogFn = (line: string) => void;

export const defaultLog: LogFn = (line) => process.stderr.write(`${line}\n`);

/** Where built binaries are kept: outside the repo, so fresh clones and `npm ci` reuse them. */
export function binaryCacheDir(): string {
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

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM means the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Take the build lock, or wait for whoever holds it. Returns false when another process
 * finished the build while we waited, so there is nothing left to do.
 */
export async function acquireBuildLock(lockFile: string, target: string, log: LogFn, label = 'the Temporal CLI'): Promise<boolean> {
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
      log(`waiting for another process (pid ${holder}) that is building ${label} into ${path.dirname(target)}`);
      announced = true;
    }
    await sleep(2_000);
  }
}

/** No binary to run and none could be built: callers catch it to fall back to something else. */
export class BinaryNotFoundError extends Error {
  constructor(
    /** The executable's name (GoBinary.name), e.g. `temporal`. */
    readonly binary: string,
    message: string,
  ) {
    super(message);
    this.name = 'BinaryNotFoundError';
  }
}

/** Runs a command to its end: the exit code (null when a signal ended it), stdout and stderr together. */
export async function runToEnd(binary: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  return { code, out };
}

export interface GoBinary {
  /** The executable's name (on PATH, in the cache folder). */
  name: string;
  /**
   * The name `go install` gives it (the package's last path element), when that differs from
   * `name`: the Temporal server's `cmd/server` builds a `server`, too generic to look up on PATH.
   */
  builtName?: string;
  /** For messages: "the Temporal CLI". */
  label: string;
  /** The environment variable that names the binary explicitly. */
  pathVar: string;
  module: string;
  version: string;
  /** Linker flags of the build; default `-s -w` (no symbol table or debug information). */
  ldflags?: string;
  /** The npm script that builds it into the cache folder (`npm run temporal:install`). */
  installScript: string;
  /** Another way to do without the binary, first in the messages (`set S3_ENDPOINT to use an S3 store`). */
  instead?: string;
}

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** What to do when there is no binary and no Go to build one. */
function missingHint(spec: GoBinary, cacheDir: string): string {
  return (
    `${capitalized(spec.label)} was not found: ${spec.instead ? `${spec.instead}, ` : ''}set ${spec.pathVar}, put \`${spec.name}\` on PATH, ` +
    `or install Go so \`${spec.installScript}\` can build ${spec.module}@${spec.version} into ${cacheDir}.`
  );
}

/**
 * Absolute path of the binary: its path variable, else on PATH, else the cache folder, else
 * built there with `go install`. Throws BinaryNotFoundError when none of these is possible.
 */
export async function resolveGoBinary(spec: GoBinary, log: LogFn = defaultLog): Promise<string> {
  const explicit = process.env[spec.pathVar];
  if (explicit) {
    const abs = path.resolve(explicit);
    // An explicit setting that silently falls through to another binary would hide typos.
    if (!isExecutableFile(abs))
      throw new BinaryNotFoundError(spec.name, `${spec.pathVar}: ${abs} does not exist or is not an executable file.`);
    return abs;
  }
  const onPath = findOnPath(spec.name);
  if (onPath) return onPath;
  const cacheDir = binaryCacheDir();
  const cached = path.join(cacheDir, binaryName(spec.name));
  if (isExecutableFile(cached)) return cached;
  const go = findGo();
  if (!go) throw new BinaryNotFoundError(spec.name, missingHint(spec, cacheDir));
  await goInstall(spec, go, cacheDir, cached, log);
  return cached;
}

async function goInstall(spec: GoBinary, go: string, cacheDir: string, target: string, log: LogFn): Promise<void> {
  await fsp.mkdir(cacheDir, { recursive: true });
  const lockFile = path.join(cacheDir, `.${spec.name}-build.lock`);
  if (!(await acquireBuildLock(lockFile, target, log, spec.label))) return;
  // Build into a private staging dir and rename, so a concurrent reader never sees a
  // half-written binary at the final path and an interrupted build leaves nothing behind there.
  const staging = await fsp.mkdtemp(path.join(cacheDir, '.staging-'));
  try {
    if (isExecutableFile(target)) return;
    log(`building ${spec.label} ${spec.version} with go install (takes a few minutes, once) into ${cacheDir}`);
    const child = spawn(go, ['install', `-ldflags=${spec.ldflags ?? '-s -w'}`, `${spec.module}@${spec.version}`], {
      env: { ...process.env, GOBIN: staging, CGO_ENABLED: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail = forwardLines(child, 20, (line) => log(`go: ${line.replace(/^go: /, '')}`));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, signal) => resolve(signal ? null : c));
    });
    const built = path.join(staging, binaryName(spec.builtName ?? spec.name));
    if (code !== 0 || !isExecutableFile(built)) {
      throw new BinaryNotFoundError(
        spec.name,
        `go install ${spec.module}@${spec.version} failed (exit ${code ?? 'by signal'}); ${spec.instead ? `${spec.instead}, or ` : ''}` +
          `build it yourself and set ${spec.pathVar} to it. ` +
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

/** Passes each output line of the child to `onLine`, keeping the last `keep` lines for error messages. */
function forwardLines(child: ChildProcess, keep: number, onLine: LogFn): string[] {
  const tail: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      tail.push(line);
      if (tail.length > keep) tail.shift();
      onLine(line);
    });
  }
  return tail;
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

export interface ServerProcess {
  child: ChildProcess;
  /** Resolves when the process has exited, whoever stopped it. */
  exited: Promise<Exit>;
  /** Resolves with why the server can no longer become ready: it exited (with its last lines), or could not be run. */
  failed: Promise<Error>;
  /** SIGTERM, then SIGKILL after the grace period; a no-op once the process has exited. */
  stop(): Promise<void>;
}

/**
 * Runs a server as a child whose output goes to `log` (silenced while it stops: shutdown noise
 * says nothing useful) and which is killed if this process exits first: a server left behind
 * would hold its ports and files.
 */
export function spawnServer(
  binary: string,
  args: string[],
  opts: { what: string; log: LogFn; env?: NodeJS.ProcessEnv; detached?: boolean; stopGraceMs: number },
): ServerProcess {
  const child = spawn(binary, args, {
    ...(opts.env ? { env: opts.env } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  let stopping = false;
  const tail = forwardLines(child, 30, (line) => {
    if (!stopping) opts.log(line);
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  // 'close' comes after the output streams end, so an early-exit message carries the last lines.
  const closed = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const failed = Promise.race([
    closed.then(
      ({ code, signal }) =>
        new Error(`${opts.what} exited (${signal ?? `code ${code}`}) before it was ready. Last output:\n${tail.join('\n')}`),
    ),
    spawnError.then((err) => new Error(`cannot run ${binary}: ${err.message}`)),
  ]);

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
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.stopGraceMs);
    await exited;
    clearTimeout(timer);
  };
  return { child, exited, failed, stop };
}
