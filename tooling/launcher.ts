// The one way a development tool, a test or a bench starts a process of the service: the API
// (api/main.ts) or the worker (workers/main.ts) as `npm run start:api` / `start:worker` start
// them, or any other TypeScript entry of the repository (a simulator, a bench server) or command.
// `npm start` (bin/start.ts), the cluster tier (tooling/serviceFleet.ts), the tests'
// processes (test/support/processes.ts, foundation.ts), the rolling-deploy check and the
// benches all go through it.
//
//   const api = await launch({ kind: 'api', env: { PORT: '3100', MCP_PORT: '3101' }, ready: apiAnswers(3100, 3101) });
//   const worker = await launch({ kind: 'worker', ready: { line: /worker running/ } });
//   await api.kill();                 // SIGKILL (a crash); `await api.stop()` is the graceful end
//   const again = await api.restart(); // the same options, a new process, ready again
//
// launch(options) spawns and, when `ready` is given, waits until the process is ready; it
// throws with the last lines of output when the process exits first or the time runs out (and
// then the process is stopped, not left behind).
//
// Options (LaunchOptions):
//   kind       'api' | 'worker': the entry (api/main.ts, workers/main.ts) and the Node options
//              production gives it: lib/apiRuntime.ts API_NODE_ARGS; the worker's heap limit
//              from WORKER_HEAP_MIB as the child's environment has it (lib/workerHeap.ts). No
//              configuration is read here at import, so a bench may set its environment first.
//   entry      another TypeScript file (relative to the repository or absolute), or, with kind,
//              one that stands in for it (a bench's baseline worker gets the worker's options).
//   command    [executable, ...args] instead of a TypeScript entry (`['npm', 'start']`).
//   name       for log lines and errors (default: the kind, else the entry's file name).
//   env        variables over this process's environment (undefined removes one). CRASH_AT,
//              PORT, MCP_PORT, TEMPORAL_TASK_QUEUE, … all go here.
//   nodeArgs   more Node options, after the kind's and before the entry: `--cpu-prof`,
//              `--cpu-prof-dir=…`, `--max-old-space-size=…` (the last one given wins).
//   productionNodeArgs  false to run the kind's entry with Node's defaults (default true).
//   group      a process group of its own (detached): a stop's SIGKILL reaches whatever the
//              process spawned, and a terminal's Ctrl-C does not reach it directly.
//   ipc        an IPC channel (child.send / 'message'), as fork() gives.
//   ready      Readiness, or a list that must all hold, in order (see below).
//   readyTimeoutMs (120 s), stopGraceMs (15 s): how long to wait for ready, and for a stop
//              before SIGKILL.
//   onLine     (line, stream) for every output line, e.g. echoLines('[api]') to prefix and
//              print them; otherwise output is only kept.
//   tailLines  how many last lines `tail` keeps for error messages (40); keepOutput keeps all.
//
// Readiness: { line: RegExp } a line of stdout or stderr matches (lines already printed count);
// { port } something accepts TCP connections there; { url, answers? } a GET gets an answer that
// `answers(res)` accepts (default: res.ok); { message } an IPC message the predicate accepts;
// { probe(p), close?() } anything else, polled (workerPolls: the Temporal server has seen this
// very process poll both halves of its task queue). apiAnswers(port, mcpPort?) is the API's:
// /v1/health answers, and the MCP listener's resource metadata when mcpPort is given.
//
// Launched: name, child, pid, tail (last lines), output (all lines with keepOutput), exited
// (resolves with { code, signal } once the process has ended and its output was read),
// running(), waitReady(readiness, timeoutMs?), stop(graceMs?) (SIGTERM to the process, SIGKILL
// to it, or its group, after the grace; the group is killed at the end in any case), kill(signal
// = 'SIGKILL') (one signal, then waits for the end: kill -9 for crash tests), restart() (stops it
// if running, launches again with the same options and waits for the same readiness).
// A process still running when this one exits is SIGKILLed (its group too): nothing is left
// holding ports.

import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { API_NODE_ARGS } from '../lib/apiRuntime';
import { workerHeapArg, DEFAULT_WORKER_HEAP_MIB } from '../lib/workerHeap';
import { portAcceptsConnections } from './ports';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..');

// tsx as a loader resolved from node_modules, not its CLI wrapper (nor npx): the wrapper sits
// between us and the script relaying signals, SIGKILLs a script that does not acknowledge a
// relayed SIGTERM within 30 ms (a busy event loop) and hides the pid whose CPU and memory a bench
// reads; one process per child gets every signal exactly once.
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

const ENTRIES = { api: 'api/main.ts', worker: 'workers/main.ts' } as const;
export type ProcessKind = keyof typeof ENTRIES;

/** How the process ended; `error` when it could not be started at all. */
export type Exit = { code: number | null; signal: NodeJS.Signals | null; error?: Error };

export type Readiness =
  | { line: RegExp }
  | { port: number; host?: string }
  | { url: string; answers?: (res: Response) => boolean }
  | { message: (m: any) => boolean }
  | { probe: (p: Launched) => Promise<boolean>; close?: () => Promise<void> };

export interface LaunchOptions {
  kind?: ProcessKind;
  entry?: string;
  command?: [string, ...string[]];
  name?: string;
  env?: NodeJS.ProcessEnv;
  nodeArgs?: string[];
  productionNodeArgs?: boolean;
  group?: boolean;
  ipc?: boolean;
  ready?: Readiness | Readiness[];
  readyTimeoutMs?: number;
  stopGraceMs?: number;
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  tailLines?: number;
  keepOutput?: boolean;
}

export interface Launched {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly options: LaunchOptions;
  /** The last `tailLines` lines of output, stdout and stderr together. */
  readonly tail: string[];
  /** Every line of output, with `keepOutput` (else empty). */
  readonly output: string[];
  readonly exited: Promise<Exit>;
  running(): boolean;
  waitReady(ready: Readiness | Readiness[], timeoutMs?: number): Promise<void>;
  stop(graceMs?: number): Promise<Exit>;
  kill(signal?: NodeJS.Signals): Promise<Exit>;
  restart(): Promise<Launched>;
}

const DEFAULT_READY_TIMEOUT_MS = 120_000;
const DEFAULT_STOP_GRACE_MS = 15_000;

/** Everything launched and still running, killed if this process exits first. */
const live = new Set<Launched>();
let exitHookInstalled = false;
function killOnExit(p: Launched): void {
  live.add(p);
  void p.exited.then(() => live.delete(p));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const q of live) killHard(q.child, q.options.group ?? false);
  });
}

function isRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

function killHard(child: ChildProcess, group: boolean): void {
  if (child.pid === undefined) return;
  try {
    if (group) process.kill(-child.pid, 'SIGKILL');
    else if (isRunning(child)) child.kill('SIGKILL');
  } catch {
    /* already gone */
  }
}

function commandOf(o: LaunchOptions): { file: string; args: string[] } {
  if (o.command) return { file: o.command[0], args: o.command.slice(1) };
  const entry = o.entry ?? (o.kind ? ENTRIES[o.kind] : undefined);
  if (!entry) throw new Error('launch: give a kind, an entry or a command');
  const production =
    o.productionNodeArgs === false
      ? []
      : o.kind === 'api'
        ? [...API_NODE_ARGS]
        : o.kind === 'worker'
          ? [workerHeapArg(Number(envOf(o).WORKER_HEAP_MIB || DEFAULT_WORKER_HEAP_MIB))]
          : [];
  return {
    file: process.execPath,
    args: [...production, ...(o.nodeArgs ?? []), '--import', TSX_LOADER, path.resolve(REPO_ROOT, entry)],
  };
}

const envOf = (o: LaunchOptions): NodeJS.ProcessEnv => ({ ...process.env, ...o.env });

function nameOf(o: LaunchOptions): string {
  return o.name ?? o.kind ?? (o.entry ? path.basename(o.entry, '.ts') : (o.command?.join(' ') ?? 'process'));
}

/** Starts the process and, with `ready`, waits until it is ready (stopping it and throwing if it never is). */
export async function launch(options: LaunchOptions): Promise<Launched> {
  const p = spawnLaunched(options);
  if (options.ready) {
    try {
      await p.waitReady(options.ready, options.readyTimeoutMs);
    } catch (err) {
      await p.kill();
      throw err;
    }
  }
  return p;
}

function spawnLaunched(options: LaunchOptions): Launched {
  const name = nameOf(options);
  const { file, args } = commandOf(options);
  const group = options.group ?? false;
  const stdio: StdioOptions = options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'];
  const child = spawn(file, args, { cwd: REPO_ROOT, env: envOf(options), stdio, detached: group });
  const keep = options.tailLines ?? 40;
  const tail: string[] = [];
  const output: string[] = [];
  const lineWatchers = new Set<(line: string) => void>();
  const reading: Promise<void>[] = [];
  for (const [stream, which] of [
    [child.stdout, 'stdout'],
    [child.stderr, 'stderr'],
  ] as const) {
    if (!stream) continue;
    reading.push(new Promise((resolve) => stream.once('close', resolve)));
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      tail.push(line);
      if (tail.length > keep) tail.shift();
      if (options.keepOutput) output.push(line);
      options.onLine?.(line, which);
      for (const w of lineWatchers) w(line);
    });
  }
  const exited = new Promise<Exit>((resolve) => {
    child.once('error', (err) => {
      resolve({ code: null, signal: null, error: err });
    });
    child.once('exit', (code, signal) => {
      // The output read to its end, so an early exit's message carries the last lines.
      void Promise.race([Promise.all(reading), sleep(1_000)]).then(() => resolve({ code, signal }));
    });
  });

  const failure = (what: string) => new Error(`${name} ${what}${tail.length ? `. Last output:\n${tail.join('\n')}` : ''}`);
  const describeExit = (e: Exit) =>
    e.error ? `could not be started (${e.error.message})` : `exited (${e.signal ?? `code ${e.code}`}) before it was ready`;

  const waitOne = async (r: Readiness, deadline: number, timeoutMs: number): Promise<void> => {
    if ('line' in r) {
      if (tail.some((l) => r.line.test(l)) || output.some((l) => r.line.test(l))) return;
      let watcher!: (line: string) => void;
      const seen = new Promise<void>((resolve) => {
        watcher = (line) => r.line.test(line) && resolve();
        lineWatchers.add(watcher);
      });
      try {
        const outcome = await Promise.race([
          seen.then(() => 'ready' as const),
          exited,
          // Unreferenced: a process that is ready must not be kept alive until the deadline.
          sleep(Math.max(0, deadline - Date.now()), 'timeout' as const, { ref: false }),
        ]);
        if (outcome === 'ready') return;
        if (outcome === 'timeout') throw failure(`printed no line matching ${r.line} within ${timeoutMs / 1000} s`);
        throw failure(describeExit(outcome));
      } finally {
        lineWatchers.delete(watcher);
      }
    }
    if ('message' in r) {
      let onMessage!: (m: unknown) => void;
      const got = new Promise<void>((resolve) => {
        onMessage = (m) => r.message(m) && resolve();
        child.on('message', onMessage);
      });
      try {
        const outcome = await Promise.race([
          got.then(() => 'ready' as const),
          exited,
          // Unreferenced: a process that is ready must not be kept alive until the deadline.
          sleep(Math.max(0, deadline - Date.now()), 'timeout' as const, { ref: false }),
        ]);
        if (outcome === 'ready') return;
        if (outcome === 'timeout') throw failure(`sent no ready message within ${timeoutMs / 1000} s`);
        throw failure(describeExit(outcome));
      } finally {
        child.off('message', onMessage);
      }
    }
    const check: () => Promise<boolean> =
      'port' in r
        ? () => portAcceptsConnections(r.port, r.host)
        : 'url' in r
          ? () =>
              fetch(r.url, { signal: AbortSignal.timeout(2_000) }).then(
                async (res) => {
                  const ok = (r.answers ?? ((x: Response) => x.ok))(res);
                  await res.body?.cancel();
                  return ok;
                },
                () => false,
              )
          : () => r.probe(launched);
    const what = 'port' in r ? `port ${r.port} accepting connections` : 'url' in r ? `${r.url} answering` : 'its readiness check';
    try {
      for (;;) {
        if (!isRunning(child)) throw failure(describeExit(await exited));
        if (await check()) return;
        if (Date.now() > deadline) throw failure(`not ready (${what}) within ${timeoutMs / 1000} s`);
        await sleep(100);
      }
    } finally {
      if ('close' in r) await r.close?.();
    }
  };

  const launched: Launched = {
    name,
    child,
    pid: child.pid ?? -1,
    options,
    tail,
    output,
    exited,
    running: () => isRunning(child),
    async waitReady(ready, timeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS) {
      const deadline = Date.now() + timeoutMs;
      for (const r of Array.isArray(ready) ? ready : [ready]) await waitOne(r, deadline, timeoutMs);
    },
    async stop(graceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS) {
      if (isRunning(child)) {
        // To the process only; anything it spawned is its own to stop, until the SIGKILL below.
        child.kill('SIGTERM');
        const timer = setTimeout(() => killHard(child, group), graceMs);
        await exited;
        clearTimeout(timer);
      }
      // Whatever it left in its group goes with it.
      if (group) killHard(child, true);
      return exited;
    },
    async kill(signal = 'SIGKILL') {
      if (isRunning(child)) child.kill(signal);
      return exited;
    },
    async restart() {
      await launched.stop();
      return launch(options);
    },
  };
  killOnExit(launched);
  return launched;
}

/** onLine that prints each line with a prefix, stdout to stdout and stderr to stderr. */
export function echoLines(prefix: string): NonNullable<LaunchOptions['onLine']> {
  return (line, stream) => (stream === 'stdout' ? process.stdout : process.stderr).write(`${prefix} ${line}\n`);
}

/** The API is up: /v1/health answers on `port` and, given `mcpPort`, the MCP listener's resource metadata too. */
export function apiAnswers(port: number, mcpPort?: number): Readiness[] {
  return [
    { url: `http://127.0.0.1:${port}/v1/health` },
    ...(mcpPort ? [{ url: `http://127.0.0.1:${mcpPort}/.well-known/oauth-protected-resource` }] : []),
  ];
}

/**
 * Whether the Temporal server has seen the worker `identity` (the SDK's default is
 * `<pid>@<hostname>`) poll both halves of the task queue, workflow tasks and activity tasks.
 */
export async function pollsBothHalves(
  connection: import('@temporalio/client').Connection,
  taskQueue: string,
  identity: string,
  namespace = 'default',
): Promise<boolean> {
  for (const taskQueueType of [1, 2]) {
    const r = await connection.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue, kind: 1 },
      taskQueueType,
    });
    if (!(r.pollers ?? []).some((p) => p.identity === identity)) return false;
  }
  return true;
}

/**
 * A worker is ready once the Temporal server has seen this very process poll both halves of
 * `taskQueue` (not only that it printed "worker running"). The address and namespace default to
 * TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE as this process's environment has them.
 */
export function workerPolls(
  taskQueue: string,
  opts: { address?: string; namespace?: string; connection?: import('@temporalio/client').Connection } = {},
): Readiness {
  let own: import('@temporalio/client').Connection | null = null;
  return {
    probe: async (p) => {
      let connection = opts.connection ?? own;
      if (!connection) {
        const { Connection } = await import('@temporalio/client');
        connection = own = await Connection.connect({ address: opts.address ?? process.env.TEMPORAL_ADDRESS });
      }
      return pollsBothHalves(
        connection,
        taskQueue,
        `${p.pid}@${os.hostname()}`,
        opts.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
      );
    },
    close: async () => {
      await own?.close();
      own = null;
    },
  };
}
