import type { ModelObject } from 'objection';
import type { Job as JobModel } from '../models';

// spec 2.12 / 3.2: the job row (every kind's; ./kinds/) is the API's view of a job's workflow (ARCHITECTURE.md:
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

/** spec 2.12 `progress`; also the answer of every job workflow's `progress` query. */
export interface JobProgress {
  progress: number;
  updatedAt: string;
  message: string;
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
