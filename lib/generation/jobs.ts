import type { Knex } from 'knex';
import type { ModelObject } from 'objection';
import { config } from '../config';
import { db } from '../db';
import { emitEvent, type OutboxEvent } from '../outbox';
import { jobDuration } from '../metrics';
import type { Job as JobModel } from '../models';
import { presentJob } from '../presenters/jobs';
import { settleJobSpend } from './spend';

// spec 2.12 / 3.2: the job row is the API's view of a generation workflow (ARCHITECTURE.md:
// lists and pagination need no Temporal visibility query). Every status change is a
// compare-and-set on this row, which is what makes cancellation safe against a starting worker:
//
//   QUEUED ──startGenerationJob──▶ RUNNING ──completeGenerationJob──▶ DONE (draft written in the same transaction)
//     │                               └────failGenerationJob───────▶ FAILED
//     └──────cancel (API)──────────────────────────────────────────▶ CANCELLED
//
// QUEUED→RUNNING and QUEUED→CANCELLED both require QUEUED, so exactly one wins; the draft and
// DONE require RUNNING, so a cancelled job can never gain a post.

export const JOB_STATUSES = ['QUEUED', 'RUNNING', 'DONE', 'FAILED', 'CANCELLED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL_STATUSES: readonly JobStatus[] = ['DONE', 'FAILED', 'CANCELLED'];
// SOURCE_INGEST: a file source (docs/sources.md); KNOWLEDGE_INGEST: a knowledge-base document.
export const JOB_TYPES = ['POST_GENERATION', 'IMAGE_GENERATION', 'SOURCE_INGEST', 'KNOWLEDGE_INGEST'] as const;
export type JobType = (typeof JOB_TYPES)[number];

/** spec 2.12 `progress`; also the answer of the generation workflow's `progress` query. */
export interface JobProgress {
  progress: number;
  updatedAt: string;
  message: string;
}

/** What the job row keeps of the request (the API's copy; the workflow reads it by job id). */
export interface GenerationJobInput {
  source: { type: 'text' | 'note' | 'idea' | 'source'; noteId?: string; ideaId?: string; sourceId?: string };
  sourceText: string;
  language: string;
  contentType: string;
  /** Validated and recorded, never acted on (spec 4.4: generation never schedules). */
  scheduledFor?: string;
}

/** A job row as the API reads it (JOB_COLUMNS): the model's columns but the request and its author. */
export type JobRow = Omit<ModelObject<JobModel>, 'input' | 'created_by'>;

/** Every column the Job resource needs; `input` (up to 100,000 characters of source) stays out of lists. */
export const JOB_COLUMNS = [
  'id',
  'workspace_id',
  'project_id',
  'type',
  'status',
  'progress',
  'result',
  'error_code',
  'error_message',
  'attempt_count',
  'estimated_completion_ms',
  'started_at',
  'completed_at',
  'created_at',
  'updated_at',
].map((c) => `jobs.${c}`);

export function progressNow(progress: number, message: string, at: Date = new Date()): JobProgress {
  return { progress, updatedAt: at.toISOString(), message };
}

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
 * caller settles the job's spend after its COMMIT (settleJobSpend): the settlement takes the
 * workspace's meter rows, which every job of the workspace needs, so it is a statement of its
 * own rather than held through this transaction.
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
 * Runs `fn`, a transaction that may move job `jobId` to a final state (finishJob), then settles
 * the job's spend in a statement of its own once that transaction has committed. A retry that
 * finds the job already final settles it too, so a settlement lost with its process is made
 * good by the next attempt (and otherwise by the reconciler); the claim makes it happen once.
 */
export async function finishingJob<T>(db: Knex, jobId: string, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const out = await db.transaction(fn);
  await settleJobSpend(db, jobId);
  return out;
}

let estimate: { value: number; at: number } | undefined;
let refreshing: Promise<number> | undefined;
const ESTIMATE_TTL_MS = 30_000;

/**
 * spec 2.12 estimatedCompletionMs: the median queue-to-done time of the latest 50 finished
 * generations service-wide, refreshed every 30 s per process; the configured default until
 * there is history. One refresh at a time: the requests that find the value stale while it is
 * read wait for that read rather than each sending their own (a burst sent one per request).
 */
export function estimateCompletionMs(): Promise<number> {
  if (estimate && Date.now() - estimate.at < ESTIMATE_TTL_MS) return Promise.resolve(estimate.value);
  refreshing ??= readEstimate().finally(() => (refreshing = undefined));
  return refreshing;
}

async function readEstimate(): Promise<number> {
  const r = await db().raw(
    `select percentile_cont(0.5) within group (order by ms) as p50, count(*)::int as n from (
       select extract(epoch from (completed_at - created_at)) * 1000 as ms from jobs
        where type = 'POST_GENERATION' and status = 'DONE' order by completed_at desc limit 50) recent`,
  );
  const { p50, n } = r.rows[0] as { p50: number | null; n: number };
  const value = n >= 5 && p50 !== null ? Math.max(1, Math.round(Number(p50))) : config.generation.estimatedCompletionMs;
  estimate = { value, at: Date.now() };
  return value;
}
