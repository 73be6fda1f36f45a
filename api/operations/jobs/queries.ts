import type { TransactionOrKnex } from 'objection';
import { JOB_COLUMNS } from '../../../lib/jobs/row';
import { Job, type Reach } from '../../../lib/models';

/** Jobs the reader may see: the workspace's, narrowed to assigned projects for plain members (spec 5.5). */
export function jobsOf(reach: Reach, trx?: TransactionOrKnex) {
  return Job.visibleTo(reach, trx).select(JOB_COLUMNS);
}

export async function findJob(reach: Reach, jobId: string): Promise<Job | undefined> {
  return jobsOf(reach).where('jobs.id', jobId).first();
}
