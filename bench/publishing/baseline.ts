import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { RESULTS_DIR } from '../harness/format';
import { summarize } from '../harness/load';
import { startWorker } from '../harness/stack';
import type { Bench } from '../publishing';

// The publishing bench's bare baselines (bench/publishing/README.md "What a run does").

export type BaselineKind = 'bare-timer' | 'timer+activity';
export type BaselineResult = Awaited<ReturnType<typeof runBaseline>>;

/** A baseline's lag and worker memory, as the run and the report print them. */
export const lagAndMemory = (b: BaselineResult) =>
  `lag p50 ${b.lag.p50S.toFixed(1)} s / p99 ${b.lag.p99S.toFixed(1)} s, worker peak RSS ${b.workerPeakRssMiB.toFixed(0)} MiB`;

export const WORKFLOW_TYPE: Record<BaselineKind, string> = { 'bare-timer': 'bareTimerWorkflow', 'timer+activity': 'timerActivityWorkflow' };

/** One baseline: `n` workflows, `concurrency` starts in flight, on `workers` worker processes. (Reads no command line: population.ts imports WORKFLOW_TYPE.) */
export async function runBaseline(
  { tclient: client, connection, mon, env }: Bench,
  kind: BaselineKind,
  o: { n: number; concurrency: number; workers: number; deadlineMs: number },
  log: (line: string) => void,
) {
  const n = o.n;
  const tag = kind === 'bare-timer' ? 'bare' : 'activity';
  const taskQueue = `bench-baseline-${tag}`;
  const type = WORKFLOW_TYPE[kind];
  const withRow = kind === 'timer+activity';
  await mon.query('create table if not exists bench_baseline (id text primary key, done_at timestamptz)');
  await mon.query('truncate bench_baseline');

  const script = path.join(import.meta.dirname, 'baselineWorker.ts');
  const logName = (i: number) => `publishing-baseline-${tag}-worker${i ? `-${i + 1}` : ''}.log`;
  const workerEnv = { ...env, BENCH_BASELINE_TASK_QUEUE: taskQueue };
  const workers = await Promise.all(
    Array.from({ length: o.workers }, (_, i) => startWorker(i, workerEnv, { logDir: RESULTS_DIR, script, logName: logName(i) })),
  );
  try {
    for (const worker of workers) await worker.waitReady(connection, taskQueue);
    const limit = pLimit(o.concurrency);
    const startAll = async (count: number, prefix: string, dueMs: number) => {
      if (withRow)
        await mon.query(`insert into bench_baseline (id) select $2 || g from generate_series(0, $1::int - 1) g`, [count, `${prefix}-`]);
      const t0 = Date.now();
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          limit(() =>
            client.workflow.start(type, {
              taskQueue,
              workflowId: `${prefix}-${i}`,
              args: [withRow ? { dueMs, id: `${prefix}-${i}` } : { dueMs }],
            }),
          ),
        ),
      );
      return (Date.now() - t0) / 1000;
    };

    // Pilot: 200 workflows due now size the run (the start rate), and warm the worker up.
    const startRate = Math.min(200, n) / (await startAll(Math.min(200, n), `pilot-${tag}`, 0));
    const dueMs = Math.ceil((Date.now() + (n / startRate) * 1000 * 1.3 + 15_000) / 10_000) * 10_000;
    const startedS = await startAll(n, `run-${tag}`, dueMs);
    log(
      `baseline ${kind}: ${n} workflows started in ${startedS.toFixed(1)} s (pilot ${startRate.toFixed(0)}/s), due ${new Date(dueMs).toISOString()}${Date.now() > dueMs ? ' — NOTE: starting ran past the due time' : ''}`,
    );

    // Completion instants: the UPDATE's now() or the workflow's close time.
    const completed = `WorkflowType = '${type}' AND ExecutionStatus = 'Completed' AND WorkflowId STARTS_WITH 'run-'`;
    const doneAt = async (): Promise<number[]> => {
      if (withRow)
        return (
          await mon.query<{ done_at: Date }>(`select done_at from bench_baseline where id like 'run-%' and done_at is not null`)
        ).rows.map((r) => r.done_at.getTime());
      const at: number[] = [];
      for await (const wf of client.workflow.list({ query: completed })) if (wf.closeTime) at.push(wf.closeTime.getTime());
      return at;
    };
    const done = async () => (withRow ? (await doneAt()).length : (await client.workflow.count(completed)).count);

    // Drain: poll completions until every workflow is done or the deadline passes.
    while (Date.now() < dueMs) await sleep(Math.min(1000, dueMs - Date.now()));
    let last = 0;
    for (;;) {
      const c = await done();
      if (c !== last && Date.now() - dueMs > 5_000)
        log(`    baseline ${kind}: t=${((Date.now() - dueMs) / 1000).toFixed(1)} s, ${c}/${n} done`);
      last = c;
      if (c >= n || Date.now() > dueMs + o.deadlineMs) break;
      await sleep(1000);
    }
    // Visibility lags the count: list again until it has them all.
    let at = await doneAt();
    for (let tries = 1; tries < 20 && at.length < last; tries++) at = await sleep(500).then(doneAt);

    const s = summarize(at.map((t) => Math.max(0, t - dueMs)));
    const lastAt = at.length ? Math.max(...at) : dueMs;
    return {
      kind,
      workflows: n,
      startRate,
      dueAt: new Date(dueMs).toISOString(),
      completed: at.length,
      /** completed / (last completion − due) */
      drainPerS: at.length / Math.max(0.001, (lastAt - dueMs) / 1000),
      lastAfterDueS: (lastAt - dueMs) / 1000,
      lag: { p50S: s.p50 / 1000, p90S: s.p90 / 1000, p99S: s.p99 / 1000, maxS: s.max / 1000 },
      workerPeakRssMiB: Math.max(...workers.map((w) => w.peakRssKiB)) / 1024,
    };
  } finally {
    for (const worker of workers) await worker.stop();
  }
}
