import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { workerHeapArg } from '../../lib/workerHeap';
import { startWorker, type WorkerRun } from '../publishing/worker';
import { startServer, type ServerHandle } from '../harness/servers';
import { request, type JobTimes, type Reply } from './figures';

// The generation bench's bare baseline ("the least Temporal can do on the same server in the same
// run"): a bare accept server (serve-bare.ts: one INSERT, one workflow start) and a worker with
// the service worker's settings running bareJobWorkflow (one activity, one UPDATE), each a child
// process, on the bench's Temporal dev server and database. A round sends the burst the way the
// service's rounds do and reads queue→done from the rows: created_at → completed_at.

export const BASELINE_TASK_QUEUE = 'bench-gen-baseline';
export const BASELINE_TABLE = 'bench_gen_baseline';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface BareBaseline {
  server: ServerHandle;
  worker: WorkerRun;
  stop(): Promise<void>;
}

/** Bundles baselineWorkflows.ts into `file`, for the worker to load instead of bundling at start. */
export async function buildBaselineBundle(file: string): Promise<string> {
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const quiet = { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never;
  const bundle = await bundleWorkflowCode({ workflowsPath: path.join(import.meta.dirname, 'baselineWorkflows.ts'), logger: quiet });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bundle.code);
  return file;
}

/**
 * Starts the bare server and the baseline worker (`bundlePath`: a pre-built bundle of
 * baselineWorkflows.ts, else the worker bundles it at start-up) and waits until the worker polls
 * both halves of its task queue. `env` is the environment both children get, DATABASE_URL and
 * TEMPORAL_ADDRESS included.
 */
export async function startBareBaseline(opts: {
  env: NodeJS.ProcessEnv;
  logDir: string;
  bundlePath?: string | null;
  workerNodeArgs?: string[];
}): Promise<BareBaseline> {
  const env: NodeJS.ProcessEnv = {
    ...opts.env,
    BENCH_GEN_BASELINE_TASK_QUEUE: BASELINE_TASK_QUEUE,
    BENCH_GEN_BASELINE_TABLE: BASELINE_TABLE,
    ...(opts.bundlePath ? { BENCH_GEN_BASELINE_BUNDLE_PATH: opts.bundlePath } : {}),
  };
  const mon = new pg.Client({ connectionString: env.DATABASE_URL });
  await mon.connect();
  try {
    await mon.query(
      `create table if not exists ${BASELINE_TABLE} (id text primary key, created_at timestamptz not null default now(), completed_at timestamptz)`,
    );
  } finally {
    await mon.end();
  }
  // The worker as `npm run start:worker` starts it: the worker heap limit (lib/workerHeap).
  const worker = startWorker(0, env, {
    logDir: opts.logDir,
    script: path.join(import.meta.dirname, 'baselineWorker.ts'),
    logName: 'generation-baseline-worker.log',
    execArgv: [workerHeapArg(), ...(opts.workerNodeArgs ?? [])],
  });
  const stopWorker = async () => {
    const t = setTimeout(() => worker.child.kill('SIGKILL'), 15_000);
    await worker.kill('SIGTERM');
    clearTimeout(t);
  };
  let server: ServerHandle | null = null;
  try {
    server = await startServer('bare', 'bench/generation/serve-bare.ts', env);
    const { Connection } = await import('@temporalio/client');
    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
    try {
      await worker.waitReady(connection, BASELINE_TASK_QUEUE);
    } finally {
      await connection.close();
    }
  } catch (err) {
    await server?.stop();
    await stopWorker();
    throw err;
  }
  const srv = server;
  return {
    server: srv,
    worker,
    stop: async () => {
      await srv.stop();
      await stopWorker();
    },
  };
}

/**
 * One burst at the bare server: `n` requests at once with `body(i)`, then the rows polled every
 * 100 ms until every accepted job has its completed_at (or `timeoutMs` passes: an error).
 */
export async function bareRound(
  b: BareBaseline,
  agent: http.Agent,
  databaseUrl: string,
  n: number,
  body: (i: number) => unknown,
  timeoutMs: number,
): Promise<{ replies: Reply[]; t0: number; jobs: JobTimes[] }> {
  const mon = new pg.Client({ connectionString: databaseUrl });
  await mon.connect();
  try {
    await mon.query(`truncate ${BASELINE_TABLE}`);
    const t0 = performance.now();
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) => request(agent, b.server.baseUrl, 'bare', 'POST', '/jobs', body(i))),
    );
    const ids = replies.filter((r) => r.status === 200).map((r) => r.body.data.id as string);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await mon.query<{ n: number }>(
        `select count(*)::int as n from ${BASELINE_TABLE} where id = any($1) and completed_at is not null`,
        [ids],
      );
      if (rows[0]!.n >= ids.length) break;
      if (Date.now() > deadline) throw new Error(`baseline: only ${rows[0]!.n}/${ids.length} jobs done after ${timeoutMs / 1000} s`);
      await sleep(100);
    }
    const { rows } = await mon.query<{ created_at: Date; completed_at: Date | null }>(
      `select created_at, completed_at from ${BASELINE_TABLE} where id = any($1)`,
      [ids],
    );
    return { replies, t0, jobs: rows.map((r) => ({ createdAt: r.created_at.getTime(), completedAt: r.completed_at?.getTime() ?? null })) };
  } finally {
    await mon.end();
  }
}
