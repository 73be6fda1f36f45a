import { config } from '../../config';
import type { KnowledgeJobInput } from '../../knowledge/ingest';
import { defineJobKind } from '../kind';

// KNOWLEDGE_INGEST (docs/knowledge.md): a knowledge-base document fetched, extracted and
// chunked; workflows/ingestKnowledge.ts, activities/knowledge.ts, api/operations/knowledge/.
// Only a file calls a paid model (transcription): the operation passes no limits for the others,
// so they reserve nothing.

export const knowledgeIngest = defineJobKind<KnowledgeJobInput>()({
  type: 'KNOWLEDGE_INGEST',
  workflow: 'ingestKnowledgeWorkflow',
  label: 'knowledge ingest',
  reserveCents: () => config.knowledge.reserveCents,
  // A workspace-wide document's job has no project.
  describe: (job) => ({
    kind: 'ingest',
    summary: `Ingest knowledge ${job.project_id ? `for project ${job.project_id}` : 'for the workspace'}`,
  }),
});
