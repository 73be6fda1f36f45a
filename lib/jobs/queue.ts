import type { Knex } from 'knex';
import { config } from '../config';
import { afterCommit, answerAfterCommit, db, inUnitOfWork, pool } from '../db';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { log } from '../logger';
import { budgetTargetOf, type AiLimits } from '../spend/meters';
import { reservationFor, reserveGenerationSpend } from '../spend/reservations';
import { settleJobSpend } from '../spend/settlement';
import { startJobWorkflow } from '../temporal/start/jobs';
import { readUntilJobEnds } from './ended';
import { jobKindOf, type JobInput, type JobType } from './kinds';
import { JOB_COLUMNS, progressNow, TERMINAL_STATUSES, type JobRow } from './row';

// The one enqueue path of every job (spec 2.12, 3.2, 4.4; image jobs: docs/media.md "Image
// generation"; file sources: docs/sources.md; knowledge documents: docs/knowledge.md): record a
// QUEUED job with its spend reservation, start the workflow its kind names (./kinds/; or
// withdraw the job when that fails), and optionally wait for it. The reconciler
// (./reconcile.ts) starts a job whose start was lost through the same `startWorkflowOfJob`.

/** The job row fields a starter reads. */
export type StartableJob = Pick<JobRow, 'id' | 'type' | 'workspace_id' | 'project_id'>;

/**
 * Starts the job's workflow, the one its kind names (ARCHITECTURE.md: one workflow per job, id =
 * job id); a second start of a job is rejected by Temporal (WorkflowExecutionAlreadyStartedError).
 */
export function startWorkflowOfJob(job: StartableJob): Promise<void> {
  const kind = jobKindOf(job.type);
  return startJobWorkflow(kind.workflow, job, kind.describe(job));
}

export interface QueueJob<T extends JobType = JobType> {
  workspaceId: string;
  /** null when an operator queued it (bin/admin). */
  createdBy: string | null;
  /** null for work of no project (a workspace-wide knowledge document): it draws on the pool. */
  project: { id: string; type: string } | null;
  type: T;
  /** The request, in the shape its kind declares (./kinds/). */
  input: JobInput<T>;
  estimatedMs: number;
  /** The limits the reservation is checked against; null for a job that calls no paid model (it reserves nothing). */
  limits: AiLimits | null;
}

/**
 * Inserts the QUEUED job and reserves its kind's estimate (reserveCentsOf) in one statement: a
 * refusal rolls the insert back with it, so nothing is queued and nothing reserved. Without
 * `trx` the statement commits on its own. With `trx` it is a statement of the caller's
 * transaction (a file source recorded with its job), which a refusal aborts as a whole; the
 * caller keeps what follows it short, since the workspace's meter rows stay locked to its COMMIT.
 */
export async function insertQueuedJob<T extends JobType>(job: QueueJob<T>, trx?: Knex.Transaction): Promise<JobRow> {
  const now = new Date();
  const q = trx ?? db();
  const returning = JOB_COLUMNS.map((c) => c.slice('jobs.'.length));
  const values = {
    id: newId('job'),
    workspace_id: job.workspaceId,
    project_id: job.project?.id ?? null,
    type: job.type,
    status: 'QUEUED',
    input: JSON.stringify(job.input),
    progress: JSON.stringify(progressNow(0, 'Waiting for a worker', now)),
    estimated_completion_ms: job.estimatedMs,
    created_by: job.createdBy,
  };
  if (job.limits === null) return ((await q('jobs').insert(values).returning(returning)) as JobRow[])[0]!;
  const limits = job.limits;
  const target = budgetTargetOf(job.project);
  const reservation = reservationFor(target, now, job.type);
  const insert = q('jobs')
    .insert({
      ...values,
      reserved_cents: reservation.reservedCents,
      spend_day: reservation.spendDay,
      budget_key: reservation.budgetKey,
      budget_week: reservation.budgetWeek,
    })
    .returning(returning)
    .toSQL();
  const { week_used_before: _, ...row } = await reserveGenerationSpend(
    db(),
    { workspaceId: job.workspaceId, target, projectId: job.project?.id ?? null, limits, reservation, now },
    // The reservation runs once the job row is inserted, as the statement's last step: the
    // workspace's meter rows are held from there to the statement's COMMIT only.
    async (call) =>
      (
        await q.raw(`with job as (${insert.sql}) select job.*, ${call.sql} as week_used_before from job`, [
          ...insert.bindings,
          ...call.bindings,
        ] as readonly Knex.RawBinding[])
      ).rows[0] as JobRow & { week_used_before: number },
  );
  return row as JobRow;
}

/**
 * The workflow could not be started. A job that is still QUEUED is removed together with its
 * reservation (and, through `undo`, what the caller made with it), so the caller's retry (5xx
 * releases the Idempotency-Key) starts clean; one that already left QUEUED did start (only the
 * answer was lost) and is returned as usual.
 */
export async function withdrawUnstartedJob(jobId: string, undo?: (trx: Knex.Transaction) => Promise<void>): Promise<boolean> {
  return db().transaction(async (trx) => {
    const row = await trx('jobs').where({ id: jobId, status: 'QUEUED' }).forUpdate().first('id');
    if (!row) return false;
    await settleJobSpend(trx, jobId, { anyStatus: true });
    if (undo) await undo(trx);
    await trx('jobs').where({ id: jobId }).delete();
    return true;
  });
}

/**
 * Starts the job's workflow (its kind's, unless `start` is given); when that fails and the job
 * never left QUEUED, withdraws it and answers 503. `withdraw` removes the still-QUEUED job and
 * what it made (default: the job and its reservation) and answers true when it did.
 */
export async function startQueuedJob(
  job: StartableJob,
  opts: { withdraw?: () => Promise<boolean>; start?: (job: StartableJob) => Promise<void> } = {},
): Promise<void> {
  const { withdraw = () => withdrawUnstartedJob(job.id), start = startWorkflowOfJob } = opts;
  // Inside a unit of work (an idempotent request) the job commits with the request's stored
  // answer, so it is never withdrawn: its workflow starts after the COMMIT, and a start that
  // fails or never happens (the process died) is the reconciler's (./reconcile.ts).
  if (inUnitOfWork())
    return afterCommit(async () => {
      await start(job);
      await markWorkflowStarted([job.id]);
    });
  try {
    await start(job);
  } catch (err) {
    if (await withdraw()) {
      log.error(`${jobKindOf(job.type).label} workflow could not be started; job withdrawn`, { jobId: job.id, err });
      throw new ApiError(
        'temporarily_unavailable',
        'The job queue is unreachable right now; nothing was queued and no spend was reserved. Retry shortly.',
        undefined,
        { 'Retry-After': '5' },
      );
    }
    return;
  }
  await markWorkflowStarted([job.id]);
}

/** Inserts the QUEUED job with its reservation (insertQueuedJob), then starts its workflow (startQueuedJob). */
export async function enqueueJob<T extends JobType>(job: QueueJob<T>): Promise<JobRow> {
  const row = await insertQueuedJob(job);
  await startQueuedJob(row);
  return row;
}

/** Job ids per UPDATE of markWorkflowStarted. */
export const MARKS_PER_UPDATE = 1000;

/** Marks waiting for the UPDATE in flight to finish, and the promise of the UPDATE that takes them. */
let waiting: string[] = [];
let nextMark: Promise<void> | null = null;
let lastMark: Promise<void> = Promise.resolve();

/**
 * Records that these jobs' workflows exist, so the reconciler's pass skips them without asking
 * Temporal (./reconcile.ts). Best effort: a mark that is lost only costs the reconciler one start
 * attempt, answered "already started". The process's marks are grouped: while one UPDATE is in
 * flight, the jobs started meanwhile wait for it and then go in one UPDATE together, so a burst
 * of accepted jobs does not cost a statement each; the promise settles once the job's is done.
 */
export function markWorkflowStarted(jobIds: readonly string[]): Promise<void> {
  if (jobIds.length === 0) return Promise.resolve();
  waiting.push(...jobIds);
  if (!nextMark) {
    nextMark = lastMark.then(async () => {
      const ids = waiting;
      waiting = [];
      nextMark = null;
      try {
        // However many gathered, no UPDATE exceeds Postgres' 65,535 parameters.
        for (let i = 0; i < ids.length; i += MARKS_PER_UPDATE)
          await db()('jobs')
            .whereIn('id', ids.slice(i, i + MARKS_PER_UPDATE))
            .whereNull('workflow_started_at')
            .update({ workflow_started_at: db().fn.now() });
      } catch (err) {
        log.warn('could not record job workflow starts', { jobIds: ids.length, err: err instanceof Error ? err.message : String(err) });
      }
    });
    lastMark = nextMark;
  }
  return nextMark;
}

/**
 * The answer `{ data: Job }` of a request that queued `job` and may wait for it (spec 4.4
 * `wait_for_completion_ms`): the job as queued, or as it stands when the wait ends. Inside a unit
 * of work the wait runs after the COMMIT (lib/db.ts answerAfterCommit): a worker cannot see the
 * job before.
 */
export function answerWithJob<T>(job: JobRow, waitForCompletionMs: number | undefined, present: (row: JobRow) => T): Promise<T> {
  if (!waitForCompletionMs || waitForCompletionMs <= 0) return Promise.resolve(present(job));
  return answerAfterCommit(present(job), async () => present(await waitForJob(job, waitForCompletionMs)));
}

/**
 * spec 4.4 wait_for_completion_ms (clamped to the configured maximum): reads the job row (the
 * API's view) until a final status or the deadline, woken by the job's end (./ended.ts). The row
 * answers the same whether or not a worker is up, which a wait inside the workflow
 * (update-with-start) would not; and it is the row's progress, not a workflow query, so the
 * answer does not outlast the caller's hint.
 */
export async function waitForJob(job: JobRow, waitForCompletionMs: number | undefined): Promise<JobRow> {
  const waitMs = Math.min(Math.max(waitForCompletionMs ?? 0, 0), config.limits.waitForCompletionMaxMs);
  if (waitMs === 0) return job;
  return readUntilJobEnds(
    job.id,
    async () => (await pool()('jobs').where({ id: job.id }).first(JOB_COLUMNS)) as JobRow,
    (row) => TERMINAL_STATUSES.includes(row.status),
    { deadline: Date.now() + waitMs, recheckMs: WAIT_RECHECK_MS },
  );
}

/** How often a wait reads the job row when no end was announced (a lost notification costs at most this). */
const WAIT_RECHECK_MS = 1_000;
