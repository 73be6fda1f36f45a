import type { TransactionOrKnex } from 'objection';
import { JOB_COLUMNS, type JobProgress, type JobRow } from '../../../lib/jobs/row';
import { presentJob, type Job as PresentedJob } from '../../../lib/generation/jobs';
import { queryJobProgress } from '../../../lib/temporal/start/jobs';
import { Job, type Reach } from '../../../lib/models';

/** Jobs the reader may see: the workspace's, narrowed to assigned projects for plain members (spec 5.5). */
export function jobsOf(reach: Reach, trx?: TransactionOrKnex) {
  return Job.visibleTo(reach, trx).select(JOB_COLUMNS);
}

export async function findJob(reach: Reach, jobId: string): Promise<Job | undefined> {
  return jobsOf(reach).where('jobs.id', jobId).first();
}

/**
 * spec 4.8 "with progress snapshot": a RUNNING job asks its workflow (the `progress` query) and
 * shows whichever of that answer and the row's last recorded progress is newer; the activities
 * write the row at each attempt, the workflow knows the stage in between. Any other status, or
 * a workflow that cannot answer in time, shows the row.
 */
export async function presentLiveJob(row: JobRow): Promise<PresentedJob> {
  if (row.status !== 'RUNNING') return presentJob(row);
  const live = await queryJobProgress(row.id);
  return presentJob(row, newer(live, row.progress));
}

function newer(a: JobProgress | null, b: JobProgress | null): JobProgress | null {
  if (!a) return b;
  if (!b) return a;
  return Date.parse(a.updatedAt) >= Date.parse(b.updatedAt) ? a : b;
}
