import type http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { startWorker, type WorkerRun } from '../publishing/worker';
import { startServer, type ServerHandle } from '../harness/servers';
import { request, type JobTimes, type Reply } from './figures';
import { setTimeout as sleep } from 'node:timers/promises';

// The generation bench's bare baselines on the same Temporal server in the same run, each a bare
// accept server (serve-bare.ts) and a worker with the service worker's settings (baselineWorker.ts),
// child processes on the bench's dev server and database:
//  - minimal ("the least Temporal can do"): one INSERT and one workflow start per request,
//    bareJobWorkflow's one activity doing one UPDATE;
//  - same statements: the service's statements of one captured job replayed in the service's
//    workflow shape (sameStatements.ts).
// A round sends the burst the way the service's rounds do and reads queue→done from the rows:
// created_at → completed_at (the minimal one's own table, the same-statements one's jobs rows).

export const BASELINE_TASK_QUEUE = 'bench-gen-baseline';
export const BASELINE_TABLE = 'bench_gen_baseline';
const SAME_TASK_QUEUE = 'bench-gen-same-statements';

export interface BareBaseline {
  server: ServerHandle;
  worker: WorkerRun;
  /** Where its jobs' created_at and completed_at are. */
  table: string;
  stop(): Promise<void>;
}

/**
 * Starts a baseline's bare server and worker (`bundlePath`: a pre-built bundle of
 * baselineWorkflows.ts, else the worker bundles it at start-up) and waits until the worker polls
 * both halves of its task queue. `env` is the environment both children get, DATABASE_URL and
 * TEMPORAL_ADDRESS included. With `samePlan` (a plan file of sameStatements.ts) it is the
 * same-statements baseline, else the minimal one.
 */
export async function startBareBaseline(opts: {
  env: NodeJS.ProcessEnv;
  logDir: string;
  bundlePath?: string | null;
  workerNodeArgs?: string[];
  samePlan?: string;
}): Promise<BareBaseline> {
  const same = opts.samePlan !== undefined;
  const env: NodeJS.ProcessEnv = {
    ...opts.env,
    BENCH_GEN_BASELINE_TASK_QUEUE: same ? SAME_TASK_QUEUE : BASELINE_TASK_QUEUE,
    ...(same ? { BENCH_GEN_SAME_STATEMENTS: opts.samePlan } : { BENCH_GEN_BASELINE_TABLE: BASELINE_TABLE }),
    ...(opts.bundlePath ? { BENCH_GEN_BASELINE_BUNDLE_PATH: opts.bundlePath } : {}),
  };
  if (!same) {
    const mon = new pg.Client({ connectionString: env.DATABASE_URL });
    await mon.connect();
    try {
      await mon.query(
        `create table if not exists ${BASELINE_TABLE} (id text primary key, created_at timestamptz not null default now(), completed_at timestamptz)`,
      );
    } finally {
      await mon.end();
    }
  }
  // The worker as `npm run start:worker` starts it: the worker heap limit (lib/workerHeap).
  const worker = await startWorker(0, env, {
    logDir: opts.logDir,
    script: path.join(import.meta.dirname, 'baselineWorker.ts'),
    logName: same ? 'generation-same-statements-worker.log' : 'generation-baseline-worker.log',
    execArgv: opts.workerNodeArgs,
  });
  const stopWorker = async () => {
    await worker.stop();
  };
  let server: ServerHandle | null = null;
  try {
    server = await startServer('bare', 'bench/generation/serve-bare.ts', env);
    const { Connection } = await import('@temporalio/client');
    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
    try {
      await worker.waitReady(connection, env.BENCH_GEN_BASELINE_TASK_QUEUE!);
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
    table: same ? 'jobs' : BASELINE_TABLE,
    stop: async () => {
      await srv.stop();
      await stopWorker();
    },
  };
}

/**
 * One burst at a baseline's server: `n` requests at once with `body(i)`, then its rows polled
 * every 100 ms until every accepted job has its completed_at (or `timeoutMs` passes: an error).
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
    if (b.table === BASELINE_TABLE) await mon.query(`truncate ${BASELINE_TABLE}`);
    const t0 = performance.now();
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) => request(agent, b.server.baseUrl, 'bare', 'POST', '/jobs', body(i))),
    );
    const ids = replies.filter((r) => r.status === 200).map((r) => r.body.data.id as string);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await mon.query<{ n: number }>(
        `select count(*)::int as n from ${b.table} where id = any($1) and completed_at is not null`,
        [ids],
      );
      if (rows[0]!.n >= ids.length) break;
      if (Date.now() > deadline) throw new Error(`baseline: only ${rows[0]!.n}/${ids.length} jobs done after ${timeoutMs / 1000} s`);
      await sleep(100);
    }
    const { rows } = await mon.query<{ created_at: Date; completed_at: Date | null }>(
      `select created_at, completed_at from ${b.table} where id = any($1)`,
      [ids],
    );
    return { replies, t0, jobs: rows.map((r) => ({ createdAt: r.created_at.getTime(), completedAt: r.completed_at?.getTime() ?? null })) };
  } finally {
    await mon.end();
  }
}
