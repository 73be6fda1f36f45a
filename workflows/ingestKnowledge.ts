import { ActivityFailure, ApplicationFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { KnowledgeActivities } from '../activities/knowledge';
import type { JobStatus } from '../lib/jobs/row';
import { ROW_TRANSITION, runJobSteps, type JobWorkflowInput } from './jobSteps';

// One workflow per KNOWLEDGE_INGEST job (id = job id; docs/knowledge.md), the envelope every job
// shares: QUEUED → RUNNING → DONE with `{ documentId }`, a `progress` query, cancel only while
// QUEUED. Reading the source (a page, a transcript, a file) is the one costly step.

const { startKnowledgeJob, completeKnowledgeJob } = proxyActivities<KnowledgeActivities>(ROW_TRANSITION);
const { ingestKnowledgeDocument } = proxyActivities<KnowledgeActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '20 seconds', maximumAttempts: 3 },
});

function failureOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type) return { code: cause.type, message: cause.message };
  if (cause instanceof TimeoutFailure) return { code: 'ingest_timeout', message: 'The source could not be read in time.' };
  return { code: 'ingest_failed', message: cause instanceof Error ? cause.message : String(cause) };
}

export async function ingestKnowledgeWorkflow(
  input: JobWorkflowInput,
): Promise<{ status: JobStatus | 'MISSING'; documentId?: string; errorCode?: string }> {
  return runJobSteps({
    jobId: input.jobId,
    start: startKnowledgeJob,
    working: { progress: 0.3, message: 'Reading the source' },
    work: ingestKnowledgeDocument,
    failureOf,
    saving: 'Indexing',
    complete: async (doc) => {
      const done = await completeKnowledgeJob({ jobId: input.jobId, ...doc });
      return { status: done.status, documentId: doc.documentId };
    },
  });
}
