import { config } from '../../config';
import type { SourceIngestInput } from '../../sources/sources';
import { defineJobKind } from '../kind';

// SOURCE_INGEST (docs/sources.md "The ingest job"): a file source extracted or transcribed, its
// topics and hooks found; workflows/ingestSource.ts, activities/sourceIngest.ts, lib/sources/ingest.ts.

export const sourceIngest = defineJobKind<SourceIngestInput>()({
  type: 'SOURCE_INGEST',
  workflow: 'ingestSourceWorkflow',
  label: 'source ingest',
  reserveCents: () => config.sources.reserveCents,
  describe: (job) => ({
    kind: 'ingest',
    summary: `Ingest a file source for project ${job.project_id}`,
    details: `Job ${job.id} of workspace ${job.workspace_id}: extract or transcribe the upload, find topics and hooks; result { sourceId }.`,
  }),
});
