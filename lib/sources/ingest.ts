import type { Knex } from 'knex';
import { config } from '../config';
import { db } from '../db';
import { JOB_COLUMNS, progressNow, type JobRow } from '../generation/jobs';
import { newId } from '../ids';
import type { SourceIngestInput, SourceRow } from './sources';

// The API's (and the operator CLI's) side of SOURCE_INGEST jobs (docs/sources.md "The ingest
// job"): record a QUEUED job for a source and start its workflow (id = job id, so progress
// queries and cancel reach it as any job). Ingest jobs reserve no AI spend: they are not post
// generation (spec 8), and the topics-and-hooks call is small.

/** Inserts the QUEUED job of `source` and points the source at it (Processing), in the caller's transaction. */
export async function queueSourceIngest(
  trx: Knex.Transaction,
  source: Pick<SourceRow, 'id' | 'workspace_id' | 'project_id' | 'upload_id'>,
  createdBy: string | null,
): Promise<JobRow> {
  const input: SourceIngestInput = { sourceId: source.id, uploadId: source.upload_id! };
  const [row] = await trx('jobs')
    .insert({
      id: newId('job'),
      workspace_id: source.workspace_id,
      project_id: source.project_id,
      type: 'SOURCE_INGEST',
      status: 'QUEUED',
      input: JSON.stringify(input),
      progress: JSON.stringify(progressNow(0, 'Waiting for a worker')),
      estimated_completion_ms: config.sources.estimatedCompletionMs,
      created_by: createdBy,
    })
    .returning(JOB_COLUMNS.map((c) => c.slice('jobs.'.length)));
  const job = row as JobRow;
  await trx('sources')
    .where({ id: source.id })
    .update({ job_id: job.id, status: 'Processing', error_code: null, updated_at: trx.fn.now() });
  return job;
}

/**
 * A job whose workflow could not be started is removed (the source goes back to its previous
 * job, or away when it had none), so the caller's retry starts clean; see lib/generation/queue.ts.
 */
export async function withdrawSourceIngest(jobId: string, sourceId: string, previousJobId: string | null): Promise<boolean> {
  return db().transaction(async (trx) => {
    const row = await trx('jobs').where({ id: jobId, status: 'QUEUED' }).forUpdate().first('id');
    if (!row) return false;
    if (previousJobId) await trx('sources').where({ id: sourceId }).update({ job_id: previousJobId });
    else await trx('sources').where({ id: sourceId }).delete();
    await trx('jobs').where({ id: jobId }).delete();
    return true;
  });
}
