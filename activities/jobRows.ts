import { ApplicationFailure } from '@temporalio/activity';
import type { Knex } from 'knex';
import { finishJob } from '../lib/jobs/finish';
import { progressNow, type JobProgress, type JobStatus } from '../lib/jobs/row';
import { IngestError } from '../lib/ingest/errors';
import { OutboundError } from '../lib/outbound/outbound';

// Row steps every job's activities share (the job envelope of spec 2.12 / 3.2;
// activities/generation.ts, imageGeneration.ts, sourceIngest.ts, knowledge.ts). Each is guarded by the job's status,
// so a retry after a lost answer sees its own earlier commit instead of acting again.

/**
 * A failure with a code (an outbound call's, or the source's own) as the job's errorCode: the
 * ApplicationFailure's type. One another attempt cannot fix stops the retries, and so does the third.
 */
export function codedFailure(err: unknown, attempt: number): unknown {
  if (!(err instanceof OutboundError || err instanceof IngestError)) return err;
  return ApplicationFailure.create({
    type: err.code,
    message: err.message,
    nonRetryable: !err.retryable || attempt >= 3,
    details: [{ status: err instanceof OutboundError ? err.status : null }],
  });
}

export type StartOutcome = { running: true } | { running: false; status: JobStatus | 'MISSING' };

/** QUEUED → RUNNING showing `message`, or the reason it cannot start (a cancel won the race, the job is gone). */
export async function startQueuedJob(
  db: Knex,
  jobId: string,
  progress: number,
  message: string,
  /** An extra condition the start must meet (the job-processing switch); a job held back by it answers QUEUED. */
  also?: { sql: string; bindings: readonly string[] },
): Promise<StartOutcome> {
  const q = db('jobs').where({ id: jobId, status: 'QUEUED' });
  if (also) q.whereRaw(also.sql, [...also.bindings]);
  const [started] = await q
    .update({
      status: 'RUNNING',
      started_at: db.fn.now(),
      updated_at: db.fn.now(),
      progress: JSON.stringify(progressNow(progress, message)),
    })
    .returning('id');
  if (started) return { running: true };
  const row = await db('jobs').where({ id: jobId }).first('status');
  if (!row) return { running: false, status: 'MISSING' };
  // Only the job's own workflow moves it to RUNNING: seeing it means an earlier attempt of this
  // activity committed and its answer was lost.
  if (row.status === 'RUNNING') return { running: true };
  return { running: false, status: row.status };
}

/**
 * The job (with its project's names) that a costly step works on. The step runs only for a
 * RUNNING job; anything else cannot get better by retrying.
 */
export async function loadRunningJob(db: Knex, jobId: string, columns: string[]) {
  const job = await db('jobs as j')
    .leftJoin('projects as p', 'p.id', 'j.project_id')
    .where('j.id', jobId)
    .first('j.status', 'j.input', ...columns, 'p.display_name', 'p.slug');
  if (!job) throw ApplicationFailure.nonRetryable('The job no longer exists.', 'job_missing');
  if (job.status !== 'RUNNING') throw ApplicationFailure.nonRetryable(`The job is ${job.status}, not RUNNING.`, 'job_not_running');
  return job;
}

/**
 * Adds what one paid call cost to the job, whether or not the step succeeded: settlement
 * (settleJobSpend) charges the meters what the provider billed for every attempt, retries included.
 */
export async function chargeJob(db: Knex, jobId: string, cents: number): Promise<void> {
  if (cents > 0) await db('jobs').where({ id: jobId }).increment('cost_cents', cents);
}

/** The job row, locked for the rest of the transaction: every transition checks its status first. */
export function lockJob(trx: Knex.Transaction, jobId: string) {
  return trx('jobs').where({ id: jobId }).forUpdate().first();
}

/**
 * lockJob, with whether the job's project still exists (`live_project_id`, null when it was
 * deleted or the job has none) read in the same statement: the project row is not locked.
 */
export function lockJobWithProject(trx: Knex.Transaction, jobId: string) {
  return trx('jobs as j')
    .leftJoin('projects as p', 'p.id', 'j.project_id')
    .where('j.id', jobId)
    .forUpdate('j')
    .first('j.*', 'p.id as live_project_id');
}

/** A locked RUNNING (or QUEUED) job → FAILED with `code`, its progress kept where it stopped. */
export async function failLockedJob(
  trx: Knex.Transaction,
  job: { id: string; progress: JobProgress | null },
  error: { code: string; message: string },
): Promise<void> {
  await finishJob(trx, job.id, {
    status: 'FAILED',
    progress: progressNow(job.progress?.progress ?? 0.1, `Failed: ${error.code}`),
    errorCode: error.code,
    errorMessage: error.message,
  });
}
