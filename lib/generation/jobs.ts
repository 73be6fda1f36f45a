import type { JobProgress, JobRow } from '../jobs/row';
import type { Job } from '../../api/operations/jobs/schema';

// The Job resource (spec 2.12) of a job row (lib/jobs/row.ts).

/** spec 2.12. `live` is the workflow's own progress answer when it was asked (GET of a RUNNING job). */
export function presentJob(row: JobRow, live?: JobProgress | null): Job {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    projectId: row.project_id,
    startedAt: row.started_at?.toISOString() ?? null,
    completedAt: row.completed_at?.toISOString() ?? null,
    progress: live ?? row.progress ?? null,
    result: row.result ?? null,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    attemptCount: row.attempt_count,
    estimatedCompletionMs: row.estimated_completion_ms,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
export type { Job };
