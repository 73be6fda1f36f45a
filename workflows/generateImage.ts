import { ActivityFailure, ApplicationFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { ImageGenerationActivities } from '../activities/imageGeneration';
import type { JobStatus } from '../lib/jobs/row';
import { ROW_TRANSITION, runJobSteps, type JobWorkflowInput } from './jobSteps';

// One workflow per image generation job (id = job id, docs/media.md "Image generation"), the
// same envelope as post generation: QUEUED → RUNNING → DONE with `{ assetId, key }`, a
// `progress` query, cancel only while QUEUED (the API moves the row first; this workflow then
// finds it CANCELLED and ends). The envelope's steps are workflows/jobSteps.ts.

// Row transitions: short, guarded by the job's status, retried without limit (workflows/jobSteps.ts).
const { startImageJob, completeImageJob } = proxyActivities<ImageGenerationActivities>(ROW_TRANSITION);
// An images API call costs money on every attempt: bounded attempts, and the activity marks
// failures that another try cannot fix as non-retryable. The import is by content, so a retry
// lands on the same asset.
const { renderJobImage } = proxyActivities<ImageGenerationActivities>({
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
});

export type ImageWorkflowInput = JobWorkflowInput;

function failureOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type) return { code: cause.type, message: cause.message };
  if (cause instanceof TimeoutFailure) return { code: 'images_timeout', message: 'The image was not ready in time.' };
  return { code: 'image_generation_failed', message: cause instanceof Error ? cause.message : String(cause) };
}

export async function generateImageWorkflow(
  input: ImageWorkflowInput,
): Promise<{ status: JobStatus | 'MISSING'; assetId?: string; errorCode?: string }> {
  return runJobSteps({
    jobId: input.jobId,
    start: startImageJob,
    working: { progress: 0.3, message: 'Drawing the image' },
    work: renderJobImage,
    failureOf,
    saving: 'Saving',
    complete: async (asset) => {
      const done = await completeImageJob({ jobId: input.jobId, ...asset });
      return { status: done.status, assetId: asset.assetId };
    },
  });
}
