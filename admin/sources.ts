import { db } from '../lib/db';
import { JOB_COLUMNS, type JobRow } from '../lib/jobs/row';
import { presentJob } from '../lib/presenters/jobs';
import { startQueuedJob } from '../lib/jobs/queue';
import { Job, Source } from '../lib/models';
import { queueSourceIngest, withdrawSourceIngest } from '../lib/sources/ingest';
import { presentSource } from '../lib/presenters/sources';
import type { SourceRow } from '../lib/sources/sources';

// Operator-side source commands (bin/admin `sources list|inspect|rerun`; docs/sources.md
// "Operating"): the same presented shapes as the API, without a credential.

async function withJob(row: SourceRow) {
  const job = row.job_id ? ((await db()('jobs').where({ id: row.job_id }).first(JOB_COLUMNS)) as JobRow | undefined) : undefined;
  // As the API reads it: a file source whose job failed or was cancelled is Failed.
  if (row.status === 'Processing' && job && (job.status === 'FAILED' || job.status === 'CANCELLED')) {
    row.status = 'Failed';
    row.error_code = job.status === 'CANCELLED' ? 'job_cancelled' : job.error_code;
  }
  return { source: presentSource(row), job: job ? presentJob(job) : null };
}

export async function listSources(input: { workspaceId: string; projectId?: string; status?: string; limit?: number }) {
  const q = Source.forWorkspace(input.workspaceId)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(input.limit ?? 50);
  if (input.projectId) q.where({ project_id: input.projectId });
  const rows = await q.castTo<SourceRow[]>();
  const out = [];
  for (const r of rows) {
    const { source, job } = await withJob(r);
    if (input.status && source.status !== input.status) continue;
    out.push({ ...source, jobStatus: job?.status ?? null });
  }
  return out;
}

async function sourceRow(sourceId: string): Promise<SourceRow> {
  const row = (await db()('sources').where({ id: sourceId }).first()) as SourceRow | undefined;
  if (!row) throw new Error(`no source ${sourceId}`);
  return row;
}

export async function inspectSource(sourceId: string) {
  const row = await sourceRow(sourceId);
  const jobs = await Job.forWorkspace(row.workspace_id)
    .where({ type: 'SOURCE_INGEST' })
    .whereRaw(`input->>'sourceId' = ?`, [row.id])
    .orderBy('created_at', 'asc')
    .select(JOB_COLUMNS)
    .castTo<JobRow[]>();
  const { source, job } = await withJob(row);
  return { workspaceId: row.workspace_id, uploadId: row.upload_id, source, job, attempts: jobs.map((j) => presentJob(j)) };
}

/** Runs the ingest of a file source again, when its latest job FAILED or was CANCELLED. */
export async function rerunSourceIngest(sourceId: string) {
  const row = await sourceRow(sourceId);
  if (row.type !== 'file' || !row.upload_id) throw new Error(`source ${sourceId} is a text source; there is nothing to ingest`);
  const previous = row.job_id;
  const job = await db().transaction(async (trx) => {
    const locked = (await trx('sources').where({ id: row.id }).forUpdate().first()) as SourceRow;
    const last = locked.job_id ? await trx('jobs').where({ id: locked.job_id }).first('status') : undefined;
    if (last && last.status !== 'FAILED' && last.status !== 'CANCELLED')
      throw new Error(`source ${sourceId}'s ingest job ${locked.job_id} is ${last.status}; only a FAILED or CANCELLED ingest is run again`);
    if (!(await trx('uploads').where({ id: locked.upload_id }).first('id')))
      throw new Error(`source ${sourceId}'s upload ${locked.upload_id} has expired; the file must be submitted again`);
    return queueSourceIngest(trx, locked, null);
  });
  await startQueuedJob(job, { withdraw: () => withdrawSourceIngest(job.id, row.id, previous) });
  return { source: presentSource({ ...row, job_id: job.id, status: 'Processing', error_code: null }), job: presentJob(job) };
}
