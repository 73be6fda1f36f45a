import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { launch, workerPolls, type Launched } from '../../tooling/launcher';
import { startServer, type ServerHandle } from '../harness/servers';
import { request, type JobTimes, type Reply } from './figures';

// The generation bench's bare baselines (bench/README.md, generation): a bare accept server
// (serve-bare.ts) and a worker with the service worker's settings (baselineWorker.ts), child
// processes on the bench's Temporal and database. Minimal: one INSERT and one workflow start per
// request, one activity doing one UPDATE; with a plan of sameStatements.ts, the service's
// statements of one captured job replayed in the service's workflow shape.

export const BASELINE_TABLE = 'bench_gen_baseline';

export interface BareBaseline {
  server: ServerHandle;
  worker: Launched;
  /** Where its jobs' created_at and completed_at are. */
  table: string;
  stop(): Promise<void>;
}

/**
 * A baseline's bare server and worker (`bundlePath`: baselineWorkflows.ts pre-built), ready once
 * the worker polls its task queue; `env` goes to both, the worker's output to a log in `logDir`.
 */
export async function startBareBaseline(opts: {
  env: NodeJS.ProcessEnv;
  logDir: string;
  bundlePath?: string | null;
  samePlan?: string;
}): Promise<BareBaseline> {
  const same = opts.samePlan !== undefined;
  const taskQueue = same ? 'bench-gen-same-statements' : 'bench-gen-baseline';
  const env: NodeJS.ProcessEnv = {
    ...opts.env,
    BENCH_GEN_BASELINE_TASK_QUEUE: taskQueue,
    ...(same ? { BENCH_GEN_SAME_STATEMENTS: opts.samePlan } : { BENCH_GEN_BASELINE_TABLE: BASELINE_TABLE }),
    ...(opts.bundlePath ? { BENCH_GEN_BASELINE_BUNDLE_PATH: opts.bundlePath } : {}),
  };
  if (!same)
    await withClient(env.DATABASE_URL!, (c) =>
      c.query(
        `create table if not exists ${BASELINE_TABLE} (id text primary key, created_at timestamptz not null default now(), completed_at timestamptz)`,
      ),
    );
  // As `npm run start:worker` starts the worker: its heap limit (lib/workerHeap).
  const log = fs.createWriteStream(path.join(opts.logDir, `generation-${same ? 'same-statements' : 'baseline'}-worker.log`));
  const entry = 'bench/generation/baselineWorker.ts';
  const worker = await launch({ kind: 'worker', entry, name: 'baseline worker', env, onLine: (line) => log.write(`${line}\n`) });
  void worker.exited.then(() => log.end());
  try {
    const server = await startServer('bare', 'bench/generation/serve-bare.ts', env);
    await worker.waitReady(workerPolls(taskQueue, { address: env.TEMPORAL_ADDRESS }), 180_000).catch(async (err) => {
      await server.stop();
      throw err;
    });
    const stop = async () => void (await Promise.all([server.stop(), worker.stop()]));
    return { server, worker, table: same ? 'jobs' : BASELINE_TABLE, stop };
  } catch (err) {
    await worker.stop();
    throw err;
  }
}

async function withClient<T>(databaseUrl: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return await use(c);
  } finally {
    await c.end();
  }
}

/** `n` requests at once, then `countDone(accepted ids)` every 100 ms until it has them all (or `timeoutMs`: an error). */
export async function burst(
  send: (i: number) => Promise<Reply>,
  n: number,
  countDone: (ids: string[]) => Promise<number>,
  timeoutMs: number,
): Promise<{ replies: Reply[]; t0: number; ids: string[] }> {
  const t0 = performance.now();
  const replies = await Promise.all(Array.from({ length: n }, (_, i) => send(i)));
  const ids = replies.filter((r) => r.status === 200).map((r) => r.body.data.id as string);
  for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
    const done = await countDone(ids);
    if (done >= ids.length) return { replies, t0, ids };
    if (Date.now() > deadline) throw new Error(`only ${done}/${ids.length} jobs done after ${timeoutMs / 1000} s`);
  }
}

/** One burst at a baseline's server with `body(i)`, queue→done read from its rows. */
export async function bareRound(
  b: BareBaseline,
  agent: http.Agent,
  databaseUrl: string,
  n: number,
  body: (i: number) => unknown,
  timeoutMs: number,
): Promise<{ replies: Reply[]; t0: number; jobs: JobTimes[] }> {
  return withClient(databaseUrl, async (c) => {
    if (b.table === BASELINE_TABLE) await c.query(`truncate ${BASELINE_TABLE}`);
    const of = `from ${b.table} where id = any($1)`;
    const { replies, t0, ids } = await burst(
      (i) => request(agent, b.server.baseUrl, 'bare', 'POST', '/jobs', body(i)),
      n,
      async (ids) => (await c.query<{ n: number }>(`select count(*)::int as n ${of} and completed_at is not null`, [ids])).rows[0]!.n,
      timeoutMs,
    );
    const { rows } = await c.query<{ created_at: Date; completed_at: Date | null }>(`select created_at, completed_at ${of}`, [ids]);
    return { replies, t0, jobs: rows.map((r) => ({ createdAt: r.created_at.getTime(), completedAt: r.completed_at?.getTime() ?? null })) };
  });
}
