import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch, workerPolls, type Launched } from '../../tooling/launcher';
import { startServer, type ServerHandle } from '../harness/servers';
import { request, type JobTimes, type Reply } from './figures';
import { BASELINE_TABLE, minimalPlan } from './plan';

// The generation bench's bare baselines (bench/README.md, generation): a bare accept server
// (serve-bare.ts) and a worker with the service worker's settings (baselineWorker.ts), child
// processes on the bench's Temporal and database, replaying a plan (plan.ts) per request: the
// minimal one, or the service's statements of one captured job in its workflow shape.

export { BASELINE_TABLE };

export interface BareBaseline {
  server: ServerHandle;
  worker: Launched;
  /** Where its jobs' created_at and completed_at are. */
  table: string;
  stop(): Promise<void>;
}

/**
 * A baseline's bare server and worker (`bundlePath`: baselineWorkflows.ts pre-built) replaying
 * the plan in `samePlan`, or the minimal plan; ready once the worker polls its task queue. `env`
 * goes to both, the worker's output to a log in `logDir`.
 */
export async function startBareBaseline(opts: {
  env: NodeJS.ProcessEnv;
  logDir: string;
  bundlePath?: string | null;
  samePlan?: string;
}): Promise<BareBaseline> {
  const name = opts.samePlan ? 'same-statements' : 'baseline';
  const { db } = await import('../../lib/db');
  let planFile = opts.samePlan;
  if (!planFile) {
    await db().raw(
      `create table if not exists ${BASELINE_TABLE} (id text primary key, created_at timestamptz not null default now(), completed_at timestamptz)`,
    );
    fs.writeFileSync((planFile = path.join(opts.logDir, 'generation-minimal-plan.json')), JSON.stringify(minimalPlan()));
  }
  const taskQueue = `bench-gen-${name}`;
  const env: NodeJS.ProcessEnv = {
    ...opts.env,
    BENCH_GEN_BASELINE_TASK_QUEUE: taskQueue,
    BENCH_GEN_PLAN: planFile,
    ...(opts.bundlePath ? { BENCH_GEN_BASELINE_BUNDLE_PATH: opts.bundlePath } : {}),
  };
  // As `npm run start:worker` starts the worker: its heap limit (lib/workerHeap).
  const log = fs.createWriteStream(path.join(opts.logDir, `generation-${name}-worker.log`));
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
    return { server, worker, table: opts.samePlan ? 'jobs' : BASELINE_TABLE, stop };
  } catch (err) {
    await worker.stop();
    throw err;
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
  n: number,
  body: (i: number) => unknown,
  timeoutMs: number,
): Promise<{ replies: Reply[]; t0: number; jobs: JobTimes[] }> {
  const { db } = await import('../../lib/db');
  if (b.table === BASELINE_TABLE) await db()(BASELINE_TABLE).truncate();
  const send = (i: number) => request(agent, `${b.server.baseUrl}/jobs`, 'bare', 'POST', body(i));
  const done = async (ids: string[]) => Number((await db()(b.table).whereIn('id', ids).whereNotNull('completed_at').count('* as n'))[0]!.n);
  const { replies, t0, ids } = await burst(send, n, done, timeoutMs);
  const rows: Array<{ created_at: Date; completed_at: Date | null }> = await db()(b.table)
    .whereIn('id', ids)
    .select('created_at', 'completed_at');
  return { replies, t0, jobs: rows.map((r) => ({ createdAt: r.created_at.getTime(), completedAt: r.completed_at?.getTime() ?? null })) };
}
