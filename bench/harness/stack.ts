import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import pLimit from 'p-limit';
import pg from 'pg';
import type { Connection } from '@temporalio/client';
import { apiAnswers, launch, workerPolls, type Readiness } from '../../tooling/launcher';
import { freePort } from '../../tooling/ports';
import { Cleanups } from './cleanups';
import { closeStores, resetStores, setPublishingEnvironment } from './database';
import { RESULTS_DIR } from './format';
import { requestText, summarize } from './load';
import { waitForQuiet } from './proc';
import { reserveTemporal, startBenchTemporal, type TemporalKind } from './temporal';

// The stack of the benches that publish (publishing, population, fairness, soak): their stores,
// Temporal, the network simulator in the bench process, the service's worker and API (started by
// tooling/launcher.ts), and their shared phases: posts created through the API, read back, lags.

/** `--no-fairness` of the benches that publish: reserveStack({ fairness: false }) runs without task-queue fairness. */
export const NO_FAIRNESS_FLAG = {
  type: 'boolean',
  help: 'first come, first served: no enableFairness, no start priority (TEMPORAL_FAIRNESS=false)',
} as const;

/**
 * The environment lib/config reads at import (children inherit it), set before any app module loads,
 * Temporal's and the simulator's ports picked first. `clusterDatabase`: the cluster tier's databases'
 * base name; `quietWaitS`: the longest wait for a quiet machine, before the ports are picked (a port
 * free minutes ago may not be); `dbFile`: the dev server on a SQLite file, surviving a restart;
 * `fairness: false`: the dev server without matching.enableFairness and every start without a priority.
 */
export async function reserveStack(o: {
  kind: TemporalKind;
  databaseUrl: string;
  redisUrl: string;
  taskQueue: string;
  clusterDatabase: string;
  quietWaitS?: number;
  dbFile?: boolean;
  fairness?: boolean;
  env?: Record<string, string>;
}) {
  const otherAtStart = o.quietWaitS ? await waitForQuiet({ waitMs: o.quietWaitS * 1000 }) : null;
  const reserved = await reserveTemporal(o.kind);
  const simPort = await freePort();
  setPublishingEnvironment({ ...o, temporalPort: reserved.port, simPort }, { ...o.env, TEMPORAL_FAIRNESS: String(o.fairness ?? true) });
  return { o, otherAtStart, reserved, simPort };
}

/** A bench's main: `body`, its clean-ups run at the end (and on Ctrl-C), then the exit code it answers (or process.exitCode). */
export function runBench(name: () => string, body: (cleanups: Cleanups) => Promise<number | void>): void {
  const cleanups = new Cleanups();
  process.once('SIGINT', () => void cleanups.run().then(() => process.exit(130)));
  void body(cleanups)
    .finally(() => cleanups.run().then(closeStores))
    .then(
      (code) => process.exit(code ?? process.exitCode ?? 0),
      (err) => {
        console.error(`${name()}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        process.exit(1);
      },
    );
}

/** The stores reset, Temporal, the simulator, a Temporal client and a monitoring connection to the bench database. */
export async function startStack({ o, reserved, simPort, otherAtStart }: Awaited<ReturnType<typeof reserveStack>>, cleanups: Cleanups) {
  await resetStores(o.databaseUrl, o.redisUrl);
  const temporal = await startBenchTemporal(reserved, { ...o, databaseName: o.clusterDatabase });
  cleanups.push(() => temporal.dispose());
  const simulator = await (await import('../../sim/network/server')).startNetworkSimulator({ port: simPort });
  cleanups.push(() => simulator.close());
  const { Connection, Client } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: temporal.address });
  cleanups.push(() => connection.close());
  const mon = new pg.Client({ connectionString: o.databaseUrl });
  await mon.connect();
  // A Postgres restarted under the bench ends the run with this, not with an unhandled event.
  mon.on('error', (err) => console.error(`monitoring connection lost: ${err.message}`));
  cleanups.push(() => mon.end());
  const db = decodeURIComponent(new URL(o.databaseUrl).pathname.slice(1));
  const client = new Client({ connection });
  return { otherAtStart, temporal, simulator, sim: simulator.control, connection, client, mon, db, taskQueue: o.taskQueue };
}

// ── The service's processes ──────────────────────────────────────────────────────────────────

export type WorkerRun = Awaited<ReturnType<typeof startWorker>>;

/** VmRSS and the kernel's high-water mark (VmHWM) of a process, in KiB; null once it is gone. */
function readStatus(pid: number): { rss: number; hwm: number } | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(text);
    return rss ? { rss: Number(rss[1]), hwm: Number(/^VmHWM:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) } : null;
  } catch {
    return null;
  }
}

/** The worker as `npm run start:worker` starts it (or a baseline `script`), not waited for: output in `logDir/logName`, RSS every `sampleMs`. */
export async function startWorker(
  index: number,
  env: NodeJS.ProcessEnv,
  opts: { logDir: string; logName: string; sampleMs?: number; execArgv?: string[]; script?: string },
) {
  fs.mkdirSync(opts.logDir, { recursive: true });
  const logFile = path.join(opts.logDir, opts.logName);
  const log = fs.createWriteStream(logFile);
  const onLine = (line: string) => log.write(`${line}\n`);
  const p = await launch({ kind: 'worker', entry: opts.script, name: `worker ${index}`, env, nodeArgs: opts.execArgv, onLine });
  const run = {
    index,
    pid: p.pid,
    child: p.child,
    startedAt: Date.now(),
    /** When both its workflow and its activity pollers were seen by the Temporal server. */
    readyAt: null as number | null,
    exitedAt: null as number | null,
    exit: null as { code: number | null; signal: NodeJS.Signals | null } | null,
    samples: [] as Array<{ t: number; rssKiB: number }>,
    /** Highest VmRSS sampled and the kernel's own high-water mark (VmHWM) at the last sample. */
    peakRssKiB: 0,
    hwmKiB: 0,
    logFile,
    async waitReady(connection: Connection, taskQueue: string, timeoutMs = 180_000): Promise<number> {
      await p.waitReady(workerPolls(taskQueue, { connection }), timeoutMs);
      return (run.readyAt ??= Date.now());
    },
    kill: async (signal: NodeJS.Signals = 'SIGKILL') => void (await p.kill(signal)),
    /** SIGTERM, as a deployment stops it (it finishes its tasks), SIGKILL after `graceMs`. */
    stop: async (graceMs = 15_000) => void (await p.stop(graceMs)),
  };
  const sample = () => {
    const s = readStatus(run.pid);
    if (!s) return;
    run.samples.push({ t: Date.now(), rssKiB: s.rss });
    run.peakRssKiB = Math.max(run.peakRssKiB, s.rss);
    run.hwmKiB = Math.max(run.hwmKiB, s.hwm);
  };
  sample();
  const timer = setInterval(sample, opts.sampleMs ?? 250);
  p.child.once('exit', (code, signal) => {
    clearInterval(timer);
    Object.assign(run, { exitedAt: Date.now(), exit: { code, signal } });
    log.end();
  });
  return run;
}

export type ApiChild = Awaited<ReturnType<typeof startApi>>;

/** The API process (api/main.ts) on a free port, once it answers (or `ready` holds). */
export async function startApi(o: { name?: string; ready?: (port: number) => Readiness | Readiness[]; readyTimeoutMs?: number } = {}) {
  const port = await freePort();
  const ready = o.ready?.(port) ?? apiAnswers(port);
  const api = await launch({ kind: 'api', name: o.name, env: { PORT: String(port) }, ready, readyTimeoutMs: o.readyTimeoutMs ?? 60_000 });
  const stop = async () => void (await api.stop(10_000));
  return { child: api.child, pid: api.pid, port, up: () => api.running(), stop, kill: async () => void (await api.kill()) };
}

/** A run's workers and APIs: every incarnation kept (the report reads their memory and exits), the last one of each at hand. */
export class ServiceProcesses {
  workers: WorkerRun[] = [];
  apis: ApiChild[] = [];
  constructor(private readonly o: { name: string; env: NodeJS.ProcessEnv; sampleMs?: number; execArgv?: (index: number) => string[] }) {}
  get worker(): WorkerRun {
    return this.workers.at(-1)!;
  }
  get api(): ApiChild {
    return this.apis.at(-1)!;
  }
  /** One more worker, `<name>-worker-<n>.log` in bench/results, not yet waited for. */
  async startWorker(): Promise<WorkerRun> {
    const index = this.workers.length + 1;
    const { name, env, sampleMs, execArgv } = this.o;
    const logName = `${name}-worker-${index}.log`;
    this.workers.push(await startWorker(index, env, { logDir: RESULTS_DIR, logName, sampleMs, execArgv: execArgv?.(index) }));
    return this.worker;
  }
  async startApi(o?: Parameters<typeof startApi>[0]): Promise<ApiChild> {
    this.apis.push(await startApi(o));
    return this.api;
  }
  /** SIGTERM to every one still running, as a deployment stops them (a worker finishes its tasks), SIGKILL after the grace. */
  async stop(): Promise<void> {
    await Promise.all([...this.apis, ...this.workers].map((p) => p.stop()));
  }
  /** The last worker's highest sampled resident memory (KiB) from its `from`th sample on. */
  peakRssKiB(from: number): number {
    return Math.max(0, ...this.worker.samples.slice(from).map((s) => s.rssKiB));
  }
  /** The last worker's resident memory now (KiB), from /proc. */
  rssKiB(): number {
    return readStatus(this.worker.pid)?.rss ?? 0;
  }
}

/** The service's workflow bundle (untraced) or a baseline's (`workflowsPath`) in `file`, built once as production's (no webpack in a worker). */
export async function writeWorkflowBundle(file: string, workflowsPath?: string): Promise<string> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const quiet = { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never;
  const bundle = workflowsPath
    ? (await import('@temporalio/worker')).bundleWorkflowCode({ workflowsPath, logger: quiet })
    : (await import('../../workers/worker')).workflowBundle({ traced: false });
  fs.writeFileSync(file, (await bundle).code);
  return file;
}

/** The service's and the publishing baselines' bundles, `<prefix>-workflow-bundle.js` and `<prefix>-baseline-bundle.js` in `dir`. */
export async function buildWorkerBundles(dir: string, prefix: string): Promise<{ service: string; baseline: string }> {
  const baselines = path.join(import.meta.dirname, '..', 'publishing', 'baselineWorkflows.ts');
  return {
    service: await writeWorkflowBundle(path.join(dir, `${prefix}-workflow-bundle.js`)),
    baseline: await writeWorkflowBundle(path.join(dir, `${prefix}-baseline-bundle.js`), baselines),
  };
}

// ── Phases: create through the API, read back, lags ──────────────────────────────────────────

/** Requests to the API on `port` with a workspace's key, `concurrency` connections kept alive: the answer's `data`. */
export function apiClient(port: number, concurrency: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  return {
    async send(method: string, urlPath: string, key: string, body: unknown): Promise<any> {
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const res = await requestText(agent, new URL(`http://127.0.0.1:${port}${urlPath}`), method, headers, JSON.stringify(body));
      if (res.status !== 200 && res.status !== 201) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 300)}`);
      return JSON.parse(res.body).data;
    },
    close: () => agent.destroy(),
  };
}

export type CreateItem = { projectId: string; content: string; scheduledFor: Date };
export type CreateResult = Awaited<ReturnType<typeof createAll>>;

/** POST /v1/posts on the API process, with one key, or the key of the item's workspace. */
export function apiCreator(port: number, key: string | ((item: CreateItem) => string), concurrency: number) {
  const client = apiClient(port, concurrency);
  const keyOf = typeof key === 'string' ? () => key : key;
  const create = async (it: CreateItem): Promise<string> => {
    const body = { projectId: it.projectId, content: it.content, scheduledFor: it.scheduledFor.toISOString() };
    return (await client.send('POST', '/v1/posts', keyOf(it), body)).id;
  };
  return { create, close: client.close };
}

/** `create` over every item, `concurrency` in flight: ids (null where it failed), latency and rate. */
export async function createAll<T>(
  items: T[],
  create: (item: T) => Promise<string>,
  concurrency: number,
  onProgress?: (done: number) => void,
) {
  const ids: (string | null)[] = new Array(items.length).fill(null);
  const lat: number[] = [];
  const errorSamples: string[] = [];
  let [errors, done] = [0, 0];
  const t0 = performance.now();
  await pLimit(concurrency).map(items, async (item, i) => {
    const a = performance.now();
    try {
      ids[i] = await create(item);
      lat.push(performance.now() - a);
    } catch (err) {
      errors++;
      if (errorSamples.length < 5) errorSamples.push((err as Error).message);
    }
    if (++done % 1000 === 0) onProgress?.(done);
  });
  const durationMs = performance.now() - t0;
  return { ids, latencyMs: summarize(lat), durationMs, rate: (items.length - errors) / (durationMs / 1000), errors, errorSamples };
}

type NetworkPost = { reference?: string | null; receivedAt: string };

/** The simulator's posts by reference (= post id): how many, and when the first arrived. */
export async function networkPosts(sim: { listPosts(f: { limit: number }): Promise<{ posts: NetworkPost[]; total?: number }> }) {
  const { posts } = await sim.listPosts({ limit: 1_000_000 });
  const byRef = new Map<string, { n: number; firstMs: number; receivedAt: string }>();
  for (const { reference, receivedAt } of posts) {
    if (!reference) continue;
    const e = byRef.get(reference) ?? byRef.set(reference, { n: 0, firstMs: Infinity, receivedAt }).get(reference)!;
    e.n++;
    if (Date.parse(receivedAt) < e.firstMs) Object.assign(e, { firstMs: Date.parse(receivedAt), receivedAt });
  }
  return { posts, byRef };
}

/** Lags in milliseconds, summarized in seconds. */
export function lagSummary(lagsMs: number[]) {
  const { count, mean, p50, p90, p99, p999, max } = summarize(lagsMs);
  return { count, meanS: mean / 1000, p50S: p50 / 1000, p90S: p90 / 1000, p99S: p99 / 1000, p999S: p999 / 1000, maxS: max / 1000 };
}
