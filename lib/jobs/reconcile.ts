import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Knex } from 'knex';
import { log } from '../logger';
import { inWorkspaceTurns, readThroughIndexes } from '../workspaceTurns';
import { startWorkflowOfJob, type StartableJob } from './queue';

// A job row is written before its workflow is started (./queue.ts). A process that
// dies between the two leaves a QUEUED job no workflow will ever run, and no answer reached the
// caller, whose retry makes a new job. The reconciler (activities/maintenance.ts) starts the
// workflow of every job still QUEUED a while after its creation and not marked as started
// (`workflow_started_at`); the workflow id is the job's, so a job whose workflow exists but whose
// mark was lost is only confirmed, never run twice. The workflow is the one the API would have
// started: the one its kind names (./kinds/), through ./queue.ts startWorkflowOfJob.

/**
 * Starts the missing workflows of jobs QUEUED for longer than `olderThanSeconds` whose start was
 * never confirmed (`workflow_started_at` null); answers how many it started. A job whose workflow
 * started (by the API, or by an earlier pass) is not read at all, so a pass over a backlog of
 * waiting jobs is one indexed query and no Temporal call (jobs_queued_unstarted). At most `limit`
 * a pass, taken in turns by workspace (lib/workspaceTurns.ts): one workspace's hundreds of lost
 * starts do not hold another's one back for passes on end.
 */
export async function reconcileQueuedJobs(db: Knex, olderThanSeconds = 60, limit = 200): Promise<number> {
  const rows: StartableJob[] = await db.transaction(async (trx): Promise<StartableJob[]> => {
    await readThroughIndexes(trx);
    return await inWorkspaceTurns(
      trx,
      trx('jobs')
        .where({ status: 'QUEUED' })
        .whereNull('workflow_started_at')
        .whereRaw('created_at < now() - make_interval(secs => ?)', [olderThanSeconds])
        .select('id', 'type', 'workspace_id', 'project_id', 'created_at'),
      'created_at',
      limit,
    ).select('id', 'type', 'workspace_id', 'project_id');
  });
  let started = 0;
  const confirmed: string[] = [];
  for (const job of rows) {
    try {
      await startWorkflowOfJob(job);
      started++;
      confirmed.push(job.id);
      log.warn('job workflow started by the reconciler (its start was lost)', { jobId: job.id, type: job.type });
    } catch (err) {
      // Only the mark was lost (or the API died after the start): the workflow is there.
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        confirmed.push(job.id);
        continue;
      }
      log.warn('job workflow not started by the reconciler', { jobId: job.id, err: err instanceof Error ? err.message : String(err) });
    }
  }
  if (confirmed.length) await db('jobs').whereIn('id', confirmed).update({ workflow_started_at: db.fn.now() });
  return started;
}
