import type { Knex } from 'knex';
import { emitEvent, type OutboxEvent } from '../outbox';
import { jobDuration } from '../metrics';
import { presentJob } from '../presenters/jobs';
import { settleJobSpend } from '../spend/settlement';
import { JOB_COLUMNS, type JobProgress, type JobRow, type JobStatus } from './row';

// A job's final state (./row.ts): DONE, FAILED or CANCELLED with its `job.completed` event, and
// the settlement of its spend (lib/spend/settlement.ts) once that has committed.

export interface FinalState {
  status: Extract<JobStatus, 'DONE' | 'FAILED' | 'CANCELLED'>;
  progress: JobProgress;
  /** The job's result; an SQL expression when it draws on the row itself (finishRunningJob). */
  result?: Record<string, unknown> | Knex.Raw;
  errorCode?: string;
  errorMessage?: string;
  /** A paid call's cost not yet on the row, added with the final state (before settlement reads it). */
  costCents?: number;
}

/** The columns the final state's UPDATE answers: the Job resource's. */
const FINAL_RETURNING = JOB_COLUMNS.map((c) => c.slice('jobs.'.length));

/** The job row's columns in `final`. */
function finalColumns(trx: Knex.Transaction, final: FinalState): Record<string, unknown> {
  return {
    status: final.status,
    progress: JSON.stringify(final.progress),
    result: final.result === undefined ? null : isRaw(final.result) ? final.result : JSON.stringify(final.result),
    error_code: final.errorCode ?? null,
    // Provider prose can be long and is shown to API clients; a paragraph is enough.
    error_message: final.errorMessage?.slice(0, 1000) ?? null,
    completed_at: trx.fn.now(),
    updated_at: trx.fn.now(),
    ...(final.costCents ? { cost_cents: trx.raw('cost_cents + ?', [final.costCents]) } : {}),
  };
}

function isRaw(v: Record<string, unknown> | Knex.Raw): v is Knex.Raw {
  return typeof (v as Knex.Raw).toSQL === 'function';
}

/** The `job.completed` event of a job row just moved to its final state (and its duration observed). */
function completedEvent(job: JobRow): OutboxEvent {
  if (job.completed_at)
    jobDuration.observe(
      { type: job.type, status: job.status },
      Math.max(0, (job.completed_at.getTime() - job.created_at.getTime()) / 1000),
    );
  return { workspaceId: job.workspace_id, projectId: job.project_id, type: 'job.completed', data: { job: presentJob(job) } };
}

/**
 * Moves a locked job row to its final state and emits `job.completed`, both in the caller's
 * transaction: the event exists exactly when the final state was committed (spec 6). The
 * caller settles the job's spend last in the same transaction (settleJobSpend, finishingJob).
 */
export async function finishJob(trx: Knex.Transaction, jobId: string, final: FinalState): Promise<JobRow> {
  const [row] = await trx('jobs').where({ id: jobId }).update(finalColumns(trx, final)).returning(FINAL_RETURNING);
  const job = row as JobRow;
  await emitEvent(trx, completedEvent(job));
  return job;
}

/**
 * finishJob for a job that must still be RUNNING with its project still there, in one
 * statement: the final UPDATE is the job's lock, its status check and the project's liveness
 * check (the project row is not locked; a post inserted for it takes its key lock). Answers the
 * row with its request (`input`), and its `job.completed` event for the caller to append with
 * the other events of its transaction (emitEvents, one INSERT); undefined, with nothing changed,
 * when the job is not RUNNING, is gone, or its project is (the caller locks it to learn which).
 */
export async function finishRunningJob(
  trx: Knex.Transaction,
  jobId: string,
  final: FinalState,
): Promise<{ job: JobRow & { input: unknown }; event: OutboxEvent } | undefined> {
  const [row] = await trx('jobs')
    .where({ id: jobId, status: 'RUNNING' })
    .whereExists((q) => q.select(trx.raw('1')).from('projects as p').whereRaw('p.id = jobs.project_id'))
    .update(finalColumns(trx, final))
    .returning([...FINAL_RETURNING, 'input']);
  if (!row) return undefined;
  const job = row as JobRow & { input: unknown };
  return { job, event: completedEvent(job) };
}

/**
 * Runs `fn`, a transaction that may move job `jobId` to a final state (finishJob), and settles
 * the job's spend as that transaction's last statement: whoever reads the job final (a wait
 * for completion, a GET) reads the meters settled, and the workspace's meter rows, which every
 * job of the workspace needs, are held only from that statement to the COMMIT. A job that was
 * already final and unsettled (ended before settlement moved here) is settled by a retry too;
 * the claim makes it happen once.
 */
export async function finishingJob<T>(db: Knex, jobId: string, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    const out = await fn(trx);
    await settleJobSpend(trx, jobId);
    return out;
  });
}
