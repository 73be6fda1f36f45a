import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { f0, RESULTS_DIR, s1, step } from '../harness/format';
import { lagSummary, startWorker } from '../harness/stack';
import type { Bench } from '../publishing';

// The publishing bench's bare baselines (bench/publishing/README.md "What a run does"). Reads no
// command line: population.ts imports WORKFLOW_TYPE.

export const WORKFLOW_TYPE = { 'bare-timer': 'bareTimerWorkflow', 'timer+activity': 'timerActivityWorkflow' } as const;

/** A baseline's lag and worker memory, as the run and the report print them. */
export const lagAndMemory = (b: { lag: { p50S: number; p99S: number }; workerPeakRssMiB: number }) =>
  `lag p50 ${b.lag.p50S.toFixed(1)} s / p99 ${b.lag.p99S.toFixed(1)} s, worker peak RSS ${b.workerPeakRssMiB.toFixed(0)} MiB`;

/** One baseline: `n` workflows, `concurrency` starts in flight, on `workers` worker processes. */
export async function runBaseline(
  { client, connection, mon, env }: Bench,
  kind: keyof typeof WORKFLOW_TYPE,
  { n, ...o }: { n: number; concurrency: number; workers: number; deadlineMs: number },
) {
  const tag = kind === 'bare-timer' ? 'bare' : 'activity';
  const taskQueue = `bench-baseline-${tag}`;
  const type = WORKFLOW_TYPE[kind];
  const withRow = kind === 'timer+activity';
  await mon.query('create table if not exists bench_baseline (id text primary key, done_at timestamptz); truncate bench_baseline');
  const script = path.join(import.meta.dirname, 'baselineWorker.ts');
  const logName = (i: number) => `publishing-baseline-${tag}-worker${i ? `-${i + 1}` : ''}.log`;
  const workerEnv = { ...env, BENCH_BASELINE_TASK_QUEUE: taskQueue };
  const workers = await Promise.all(
    Array.from({ length: o.workers }, (_, i) => startWorker(i, workerEnv, { logDir: RESULTS_DIR, script, logName: logName(i) })),
  );
  try {
    for (const worker of workers) await worker.waitReady(connection, taskQueue);
    /** `count` workflows due at `dueMs` started (their rows first): the seconds it took. */
    const startAll = async (count: number, prefix: string, dueMs: number) => {
      const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
      if (withRow) await mon.query('insert into bench_baseline (id) select unnest($1::text[])', [ids]);
      const t0 = Date.now();
      await pLimit(o.concurrency).map(ids, (id) =>
        client.workflow.start(type, { taskQueue, workflowId: id, args: [withRow ? { dueMs, id } : { dueMs }] }),
      );
      return (Date.now() - t0) / 1000;
    };

    // Pilot: 200 workflows due now size the run (the start rate), and warm the worker up.
    const startRate = Math.min(200, n) / (await startAll(Math.min(200, n), `pilot-${tag}`, 0));
    const dueMs = Math.ceil((Date.now() + (n / startRate) * 1000 * 1.3 + 15_000) / 10_000) * 10_000;
    const startedS = await startAll(n, `run-${tag}`, dueMs);
    step(
      `baseline ${kind}: ${n} workflows started in ${startedS.toFixed(1)} s (pilot ${startRate.toFixed(0)}/s), due ${new Date(dueMs).toISOString()}${Date.now() > dueMs ? ' — NOTE: starting ran past the due time' : ''}`,
    );

    // Completion instants: the UPDATE's now() or the workflow's close time.
    const completed = `WorkflowType = '${type}' AND ExecutionStatus = 'Completed' AND WorkflowId STARTS_WITH 'run-'`;
    const doneAt = async () => {
      const doneRows = `select done_at from bench_baseline where id like 'run-%' and done_at is not null`;
      if (withRow) return (await mon.query<{ done_at: Date }>(doneRows)).rows.map((r) => r.done_at.getTime());
      const at: number[] = [];
      for await (const wf of client.workflow.list({ query: completed })) if (wf.closeTime) at.push(wf.closeTime.getTime());
      return at;
    };
    const done = async () => (withRow ? (await doneAt()).length : (await client.workflow.count(completed)).count);

    // Drain: poll completions until every workflow is done or the deadline passes.
    await sleep(Math.max(0, dueMs - Date.now()));
    let last = 0;
    for (;;) {
      const c = await done();
      if (c !== last && Date.now() - dueMs > 5_000) console.log(`    baseline ${kind}: t=${s1(Date.now() - dueMs)} s, ${c}/${n} done`);
      last = c;
      if (c >= n || Date.now() > dueMs + o.deadlineMs) break;
      await sleep(1000);
    }
    // Visibility lags the count: list again until it has them all.
    let at = await doneAt();
    for (let tries = 1; tries < 20 && at.length < last; tries++) at = await sleep(500).then(doneAt);

    const lastAfterDueS = ((at.length ? Math.max(...at) : dueMs) - dueMs) / 1000;
    const r = {
      kind,
      workflows: n,
      startRate,
      dueAt: new Date(dueMs).toISOString(),
      completed: at.length,
      /** completed / (last completion − due) */
      drainPerS: at.length / Math.max(0.001, lastAfterDueS),
      lastAfterDueS,
      lag: lagSummary(at.map((t) => Math.max(0, t - dueMs))),
      workerPeakRssMiB: Math.max(...workers.map((w) => w.peakRssKiB)) / 1024,
    };
    step(
      `baseline ${kind}: ${f0(r.completed)}/${f0(n)} done, drain ${r.drainPerS.toFixed(1)} workflows/s (last ${lastAfterDueS.toFixed(1)} s after due), ${lagAndMemory(r)}`,
    );
    return r;
  } finally {
    for (const worker of workers) await worker.stop();
  }
}
