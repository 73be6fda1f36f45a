import { INGEST_KNOWLEDGE } from '../contracts/jobs';
import { startJobWorkflow, type JobRef } from './jobs';

// The starter of the knowledge ingest workflow (workflows/ingestKnowledge.ts, docs/knowledge.md);
// a workspace-wide document's job has no project.

export async function startKnowledgeWorkflow(job: JobRef, summary: string): Promise<void> {
  await startJobWorkflow(INGEST_KNOWLEDGE.type, job, { kind: 'ingest', summary });
}
