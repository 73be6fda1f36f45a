import { z } from 'zod';
import { isoOf, type WithIsoInstants } from '../db';
import type { JobProgress, JobRow } from '../jobs/row';
import { queryJobProgress } from '../temporal/start/jobs';
import { dateTime, nullableDateTime, objectComponent } from './output';

// spec 2.12: the job, answered by every operation that queues one and carried by `job.completed`.

export const jobSchema = objectComponent('Job', {
  id: z.string().describe('job_*'),
  type: z.string(),
  status: z.enum(['QUEUED', 'RUNNING', 'DONE', 'FAILED', 'CANCELLED']),
  projectId: z.string().nullable(),
  startedAt: nullableDateTime,
  completedAt: nullableDateTime,
  progress: z
    .object({ progress: z.number().min(0).max(1), updatedAt: dateTime, message: z.string() })
    .strict()
    .nullable(),
  result: z.record(z.string(), z.unknown()).nullable(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  attemptCount: z.number().int(),
  estimatedCompletionMs: z.number().int(),
  createdAt: dateTime,
  updatedAt: dateTime,
});

export type Job = z.infer<typeof jobSchema>;

/** spec 2.12. `live` is the workflow's own progress answer when it was asked (GET of a RUNNING job). */
export function presentJob(row: WithIsoInstants<JobRow>, live?: JobProgress | null): Job {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    projectId: row.project_id,
    startedAt: row.started_at ? isoOf(row.started_at) : null,
    completedAt: row.completed_at ? isoOf(row.completed_at) : null,
    progress: live ?? row.progress ?? null,
    result: row.result ?? null,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    attemptCount: row.attempt_count,
    estimatedCompletionMs: row.estimated_completion_ms,
    createdAt: isoOf(row.created_at),
    updatedAt: isoOf(row.updated_at),
  };
}

/**
 * spec 4.8 "with progress snapshot": a RUNNING job asks its workflow (the `progress` query) and
 * shows whichever of that answer and the row's last recorded progress is newer; the activities
 * write the row at each attempt, the workflow knows the stage in between. Any other status, or
 * a workflow that cannot answer in time, shows the row.
 */
export async function presentLiveJob(row: JobRow): Promise<Job> {
  if (row.status !== 'RUNNING') return presentJob(row);
  const live = await queryJobProgress(row.id);
  return presentJob(row, newer(live, row.progress));
}

function newer(a: JobProgress | null, b: JobProgress | null): JobProgress | null {
  if (!a) return b;
  if (!b) return a;
  return Date.parse(a.updatedAt) >= Date.parse(b.updatedAt) ? a : b;
}
