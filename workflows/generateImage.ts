import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  proxyActivities,
  setHandler,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { GenerationActivities } from '../activities/generation';
import type { ImageGenerationActivities } from '../activities/imageGeneration';
import type { JobProgress, JobStatus } from '../lib/generation/jobs';

// One workflow per image generation job (id = job id, docs/media.md "Image generation"), the
// same envelope as post generation: QUEUED → RUNNING → DONE with `{ assetId, key }`, a
// `progress` query, cancel only while QUEUED (the API moves the row first; this workflow then
// finds it CANCELLED and ends).

// Row transitions: short, guarded by the job's status, retried without limit.
const { startImageJob, completeImageJob } = proxyActivities<ImageGenerationActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
const { failGenerationJob, abandonGenerationJob } = proxyActivities<GenerationActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
// An images API call costs money on every attempt: bounded attempts, and the activity marks
// failures that another try cannot fix as non-retryable. The import is by content, so a retry
// lands on the same asset.
const { renderJobImage } = proxyActivities<ImageGenerationActivities>({
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
});

export const imageJobProgressQuery = defineQuery<JobProgress>('progress');

export interface ImageWorkflowInput {
  jobId: string;
  workspaceId: string;
  projectId: string;
}

function failureOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type) return { code: cause.type, message: cause.message };
  if (cause instanceof TimeoutFailure) return { code: 'images_timeout', message: 'The image was not ready in time.' };
  return { code: 'image_generation_failed', message: cause instanceof Error ? cause.message : String(cause) };
}

export async function generateImageWorkflow(
  input: ImageWorkflowInput,
): Promise<{ status: JobStatus | 'MISSING'; assetId?: string; errorCode?: string }> {
  let progress: JobProgress = { progress: 0, updatedAt: new Date().toISOString(), message: 'Waiting for a worker' };
  const report = (fraction: number, message: string) => {
    progress = { progress: fraction, updatedAt: new Date().toISOString(), message };
  };
  setHandler(imageJobProgressQuery, () => progress);
  try {
    const started = await startImageJob(input.jobId);
    if (!started.running) {
      report(progress.progress, started.status === 'CANCELLED' ? 'Cancelled' : `Not started: the job is ${started.status}`);
      return { status: started.status };
    }
    report(0.3, 'Drawing the image');
    let asset: { assetId: string; key: string };
    try {
      asset = await renderJobImage(input.jobId);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const failure = failureOf(err);
      const failed = await CancellationScope.nonCancellable(() =>
        failGenerationJob({ jobId: input.jobId, errorCode: failure.code, errorMessage: failure.message }),
      );
      report(progress.progress, `Failed: ${failure.code}`);
      return { status: failed.status, errorCode: failure.code };
    }
    report(0.9, 'Saving');
    const done = await CancellationScope.nonCancellable(() => completeImageJob({ jobId: input.jobId, ...asset }));
    report(1, done.status === 'DONE' ? 'Done' : `Ended as ${done.status}`);
    return { status: done.status, assetId: asset.assetId };
  } catch (err) {
    if (isCancellation(err)) {
      const settled = await CancellationScope.nonCancellable(() => abandonGenerationJob(input.jobId));
      report(progress.progress, `Cancelled; the job is ${settled.status}`);
    }
    throw err;
  }
}
