import { ActivityFailure, ApplicationFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { SourceIngestActivities } from '../activities/sourceIngest';
import type { JobStatus } from '../lib/jobs/row';
import { ROW_TRANSITION, runJobSteps, type JobWorkflowInput } from './jobSteps';

// One workflow per SOURCE_INGEST job (id = job id; docs/sources.md "The ingest job"): the job
// envelope of post and image generation (workflows/jobSteps.ts): QUEUED → RUNNING → DONE with
// `{ sourceId }`, a `progress` query, cancel only while QUEUED. The costly step reads the upload,
// extracts or transcribes its text and finds its topics and hooks, writing them to the source;
// completing the job marks the source `Success` in the same transaction.

const { startSourceJob, completeSourceJob } = proxyActivities<SourceIngestActivities>(ROW_TRANSITION);
// A transcription costs money and minutes on every attempt: bounded attempts, and the activity
// marks failures that another try cannot fix (an unreadable file, a refused credential) as
// non-retryable. The step writes only the source's own row, so a retry overwrites the same fields.
const { ingestSourceFile } = proxyActivities<SourceIngestActivities>({
  startToCloseTimeout: '15 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
});

function failureOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type) return { code: cause.type, message: cause.message };
  if (cause instanceof TimeoutFailure) return { code: 'ingest_timeout', message: 'The file was not read in time.' };
  return { code: 'ingest_failed', message: cause instanceof Error ? cause.message : String(cause) };
}

export async function ingestSourceWorkflow(
  input: JobWorkflowInput,
): Promise<{ status: JobStatus | 'MISSING'; sourceId?: string; errorCode?: string }> {
  return runJobSteps({
    jobId: input.jobId,
    start: startSourceJob,
    working: { progress: 0.2, message: 'Reading the file' },
    work: ingestSourceFile,
    failureOf,
    saving: 'Saving the source',
    complete: async ({ sourceId }) => {
      const done = await completeSourceJob({ jobId: input.jobId, sourceId });
      return { status: done.status, sourceId };
    },
  });
}
