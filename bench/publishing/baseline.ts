import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import pLimit from 'p-limit';
import type pg from 'pg';
import { summarize } from '../harness/load';
import { startWorker, type WorkerRun } from './worker';
import { setTimeout as sleep } from 'node:timers/promises';

// The bare baselines of the publishing bench (issue: "the least Temporal can do on the same
// server in the same run"): N workflows, each one durable timer to the same instant (bare
// timer), or one timer then one activity doing one UPDATE (timer + activity). They run on the
// bench's own dev server, on their own task queue, in a worker child process with the service
// worker's settings (workers/worker.ts workerTuning), before the service's own run.

export type BaselineKind = 'bare-timer' | 'timer+activity';

export interface BaselineResult {
  kind: BaselineKind;
  workflows: number;
  startRate: number;
  dueAt: string;
  completed: number;
  /** completed / (last completion − due) */
  drainPerS: number;
  lastAfterDueS: number;
  lag: { p50S: number; p90S: number; p99S: number; maxS: number };
  workerPeakRssMiB: number;
}

export const WORKFLOW_TYPE: Record<BaselineKind, string> = { 'bare-timer': 'bareTimerWorkflow', 'timer+activity': 'timerActivityWorkflow' };

export async function runBaseline(opts: {
  kind: BaselineKind;
  n: number;
  concurrency: number;
  client: Client;
  connection: Connection;
  mon: pg.Client;
  env: NodeJS.ProcessEnv;
  logDir: string;
  marginMs: number;
  deadlineMs: number;
  log: (line: string) => void;
  /** Worker processes on the baseline's queue, as many as the service's run has (--workers). */
  workers?: number;
}): Promise<BaselineResult> {
  const { kind, n, client, mon } = opts;
  const tag = kind === 'bare-timer' ? 'bare' : 'activity';
  const taskQueue = `bench-baseline-${tag}`;
  const type = WORKFLOW_TYPE[kind];
  await mon.query('create table if not exists bench_baseline (id text primary key, done_at timestamptz)');
  await mon.query('truncate bench_baseline');

  const workers: WorkerRun[] = await Promise.all(
    Array.from({ length: opts.workers ?? 1 }, (_, i) =>
      startWorker(
        i,
        { ...opts.env, BENCH_BASELINE_TASK_QUEUE: taskQueue },
        {
          logDir: opts.logDir,
          script: path.join(import.meta.dirname, 'baselineWorker.ts'),
          logName: `publishing-baseline-${tag}-worker${i ? `-${i + 1}` : ''}.log`,
        },
      ),
    ),
  );
  try {
    for (const worker of workers) await worker.waitReady(opts.connection, taskQueue);
    const limit = pLimit(opts.concurrency);
    const startAll = async (count: number, prefix: string, dueMs: number) => {
      const t0 = Date.now();
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          limit(() =>
            client.workflow.start(type, {
              taskQueue,
              workflowId: `${prefix}-${i}`,
              args: [kind === 'bare-timer' ? { dueMs } : { dueMs, id: `${prefix}-${i}` }],
            }),
          ),
        ),
      );
      return count / ((Date.now() - t0) / 1000);
    };

    // Pilot: 200 workflows due now size the run (the start rate), and warm the worker up.
    const pilotN = Math.min(200, n);
    if (kind === 'timer+activity')
      await mon.query(`insert into bench_baseline (id) select 'pilot-${tag}-' || g from generate_series(0, $1::int - 1) g`, [pilotN]);
    const startRate = await startAll(pilotN, `pilot-${tag}`, 0);
    const dueMs = Math.ceil((Date.now() + (n / startRate) * 1000 * 1.3 + opts.marginMs) / 10_000) * 10_000;
    if (kind === 'timer+activity')
      await mon.query(`insert into bench_baseline (id) select 'run-${tag}-' || g from generate_series(0, $1::int - 1) g`, [n]);
    const created0 = Date.now();
    await startAll(n, `run-${tag}`, dueMs);
    opts.log(
      `baseline ${kind}: ${n} workflows started in ${((Date.now() - created0) / 1000).toFixed(1)} s (pilot ${startRate.toFixed(0)}/s), due ${new Date(dueMs).toISOString()}${Date.now() > dueMs ? ' — NOTE: starting ran past the due time' : ''}`,
    );

    // Drain: poll completions until every workflow is done or the deadline passes.
    const done = async (): Promise<number> => {
      if (kind === 'timer+activity')
        return (await mon.query(`select count(*)::int as n from bench_baseline where id like 'run-%' and done_at is not null`)).rows[0].n;
      return (await client.workflow.count(`WorkflowType = '${type}' AND ExecutionStatus = 'Completed' AND WorkflowId STARTS_WITH 'run-'`))
        .count;
    };
    while (Date.now() < dueMs) await sleep(Math.min(1000, dueMs - Date.now()));
    let last = 0;
    for (;;) {
      const c = await done();
      if (c !== last && Date.now() - dueMs > 5_000)
        opts.log(`    baseline ${kind}: t=${((Date.now() - dueMs) / 1000).toFixed(1)} s, ${c}/${n} done`);
      last = c;
      if (c >= n || Date.now() > dueMs + opts.deadlineMs) break;
      await sleep(1000);
    }

    // Completion instants: the UPDATE's now() or the workflow's close time.
    const at: number[] = [];
    if (kind === 'timer+activity') {
      const { rows } = await mon.query<{ done_at: Date }>(
        `select done_at from bench_baseline where id like 'run-%' and done_at is not null`,
      );
      for (const r of rows) at.push(r.done_at.getTime());
    } else {
      for (let tries = 0; tries < 20; tries++) {
        at.length = 0;
        for await (const wf of client.workflow.list({
          query: `WorkflowType = '${type}' AND ExecutionStatus = 'Completed' AND WorkflowId STARTS_WITH 'run-'`,
        }))
          if (wf.closeTime) at.push(wf.closeTime.getTime());
        if (at.length >= last) break;
        await sleep(500);
      }
    }
    const lags = at.map((t) => Math.max(0, t - dueMs));
    const s = summarize(lags);
    const lastAt = at.length ? Math.max(...at) : dueMs;
    return {
      kind,
      workflows: n,
      startRate,
      dueAt: new Date(dueMs).toISOString(),
      completed: at.length,
      drainPerS: at.length / Math.max(0.001, (lastAt - dueMs) / 1000),
      lastAfterDueS: (lastAt - dueMs) / 1000,
      lag: { p50S: s.p50 / 1000, p90S: s.p90 / 1000, p99S: s.p99 / 1000, maxS: s.max / 1000 },
      workerPeakRssMiB: Math.max(...workers.map((w) => w.peakRssKiB)) / 1024,
    };
  } finally {
    for (const worker of workers) {
      await worker.stop();
    }
  }
}
