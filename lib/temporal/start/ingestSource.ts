import { INGEST_SOURCE } from '../contracts/jobs';
import { startJobWorkflow, type JobRef } from './jobs';

// The starter of the file source ingest workflow (workflows/ingestSource.ts, docs/sources.md
// "The ingest job").

export async function startSourceWorkflow(job: JobRef & { project_id: string }): Promise<void> {
  await startJobWorkflow(INGEST_SOURCE.type, job, {
    kind: 'ingest',
    summary: `Ingest a file source for project ${job.project_id}`,
    details: `Job ${job.id} of workspace ${job.workspace_id}: extract or transcribe the upload, find topics and hooks; result { sourceId }.`,
  });
}
