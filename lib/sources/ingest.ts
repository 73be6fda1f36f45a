import type { Knex } from 'knex';
import { config } from '../config';
import { type JobRow } from '../jobs/row';
import { insertQueuedJob, withdrawUnstartedJob } from '../jobs/queue';
import { budgetTargetOf, loadAiLimits } from '../spend/meters';
import { Project } from '../models';
import type { SourceIngestInput, SourceRow } from './sources';

// The API's (and the operator CLI's) side of SOURCE_INGEST jobs (docs/sources.md "The ingest
// job"): record a QUEUED job for a source in the caller's transaction; its workflow is started
// after the commit through lib/jobs/queue.ts startQueuedJob, as any job's. The ingest calls paid models (transcription, the
// topics-and-hooks call), so it reserves and settles AI spend as post generation does (spec 4.4,
// 7.2, 8): refused at the daily cap or an exhausted weekly budget, with nothing recorded.

/**
 * Inserts the QUEUED job of `source` with its spend reservation and points the source at it
 * (Processing), in the caller's transaction; a refusal (402) aborts that transaction, so a new
 * source is not recorded either.
 */
export async function queueSourceIngest(
  trx: Knex.Transaction,
  source: Pick<SourceRow, 'id' | 'workspace_id' | 'project_id' | 'upload_id'>,
  createdBy: string | null,
): Promise<JobRow> {
  const input: SourceIngestInput = { sourceId: source.id, uploadId: source.upload_id! };
  const project = await Project.forWorkspace(source.workspace_id, trx).findById(source.project_id).select('id', 'type');
  if (!project) throw new Error(`source ${source.id} names project ${source.project_id}, which is not in its workspace`);
  const job = await insertQueuedJob(
    {
      workspaceId: source.workspace_id,
      createdBy,
      project,
      type: 'SOURCE_INGEST',
      input,
      estimatedMs: config.sources.estimatedCompletionMs,
      limits: await loadAiLimits(trx, source.workspace_id, budgetTargetOf(project)),
    },
    trx,
  );
  // The one statement after the reservation: the meter rows are held to the COMMIT that follows.
  await trx('sources')
    .where({ id: source.id })
    .update({ job_id: job.id, status: 'Processing', error_code: null, updated_at: trx.fn.now() });
  return job;
}

/**
 * A job whose workflow could not be started is removed with its reservation (the source goes
 * back to its previous job, or away when it had none), so the caller's retry starts clean; see
 * lib/jobs/queue.ts.
 */
export async function withdrawSourceIngest(jobId: string, sourceId: string, previousJobId: string | null): Promise<boolean> {
  return withdrawUnstartedJob(jobId, async (trx) => {
    if (previousJobId) await trx('sources').where({ id: sourceId }).update({ job_id: previousJobId });
    else await trx('sources').where({ id: sourceId }).delete();
  });
}
