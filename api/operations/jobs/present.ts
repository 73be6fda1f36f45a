import type { Knex } from 'knex';
import { db } from '../../../lib/db';
import { JOB_COLUMNS, presentJob, type Job, type JobProgress, type JobRow } from '../../../lib/generation/jobs';
import { queryJobProgress } from '../../../lib/generation/workflowClient';
import type { AuthContext } from '../../auth/context';
import { scoped } from '../../auth/context';

/** Jobs the caller may see: the workspace's, narrowed to assigned projects for plain members (spec 5.5). */
export function jobsOf(auth: AuthContext, trx: Knex | Knex.Transaction = db()): Knex.QueryBuilder {
  const q = scoped(auth, 'jobs', trx).select(JOB_COLUMNS);
  if (auth.projectIds) q.whereIn('jobs.project_id', [...auth.projectIds]);
  return q;
}

export async function findJob(auth: AuthContext, jobId: string): Promise<JobRow | undefined> {
  return (await jobsOf(auth).where('jobs.id', jobId).first()) as JobRow | undefined;
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
