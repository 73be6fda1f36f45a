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
import type { Draft, GenerationActivities } from '../activities/generation';
import type { JobProgress, JobStatus } from '../lib/generation/jobs';

// One workflow per generation job (id = job id, spec 2.12 / 3.2): start the job, have the
// writer draft the post, then write the draft and DONE together. The job row is the truth
// about the job's state; this workflow only moves it through guarded transitions, so it never
// decides anything the row has not agreed to (a cancel that won the race simply ends it).

// Row transitions: short Postgres transactions guarded by the job's status, so a retry after a
// lost answer finds its own work already done. Retried without limit: giving up would strand
// a job (and its spend reservation) in RUNNING. Milliseconds of work, so a short timeout: an
// attempt lost with its worker (or its task lost in transit) is retried soon.
const { startGenerationJob, completeGenerationJob, failGenerationJob, abandonGenerationJob } = proxyActivities<GenerationActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

// The model call costs money on every attempt, so attempts are bounded, backed off, and the
// activity marks a failure non-retryable when lib/llm says another try cannot help
// (LlmError.retryable / shouldRetry) or honours the provider's Retry-After. The timeout sits
// above LLM_TIMEOUT_MS (60 s by default) so the writer's own timeout reports first, with its code;
// the activity heartbeats while it waits, so an attempt lost with its worker is retried after 20 s.
const { writeGenerationDraft } = proxyActivities<GenerationActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 4 },
});

export const jobProgressQuery = defineQuery<JobProgress>('progress');

export interface GenerationWorkflowInput {
  jobId: string;
  workspaceId: string;
  projectId: string;
}
export interface GenerationOutcome {
  status: JobStatus | 'MISSING';
  postId?: string;
  errorCode?: string;
}

/** The error code a job shows when drafting gave up: the LlmError code when there is one. */
function failureOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type?.startsWith('llm_')) return { code: cause.type, message: cause.message };
  // Out of time while writing is the model's slowness; a missed heartbeat is a lost worker.
  if (cause instanceof TimeoutFailure && cause.timeoutType === 'START_TO_CLOSE')
    return { code: 'llm_timeout', message: 'The writer did not finish in time.' };
  return { code: 'generation_failed', message: cause instanceof Error ? cause.message : String(cause) };
}

export async function generatePostWorkflow(input: GenerationWorkflowInput): Promise<GenerationOutcome> {
  let progress: JobProgress = { progress: 0, updatedAt: new Date().toISOString(), message: 'Waiting for a worker' };
  const report = (fraction: number, message: string) => {
    progress = { progress: fraction, updatedAt: new Date().toISOString(), message };
  };
  setHandler(jobProgressQuery, () => progress);

  try {
    const started = await startGenerationJob(input.jobId);
    if (!started.running) {
      report(progress.progress, started.status === 'CANCELLED' ? 'Cancelled' : `Not started: the job is ${started.status}`);
      return { status: started.status };
    }

    report(0.1, 'Writing the post');
    let draft: Draft;
    try {
      draft = await writeGenerationDraft(input.jobId);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const failure = failureOf(err);
      const failed = await CancellationScope.nonCancellable(() =>
        failGenerationJob({ jobId: input.jobId, errorCode: failure.code, errorMessage: failure.message }),
      );
      report(progress.progress, `Failed: ${failure.code}`);
      return { status: failed.status, errorCode: failure.code };
    }

    report(0.9, 'Saving the draft');
    // Once the model has answered, the draft is saved even if a cancel request arrives now:
    // only a QUEUED job can be cancelled (spec 3.2).
    const done = await CancellationScope.nonCancellable(() => completeGenerationJob({ jobId: input.jobId, draft }));
    report(1, done.status === 'DONE' ? 'Done' : `Ended as ${done.status}`);
    return done;
  } catch (err) {
    if (isCancellation(err)) {
      // The API asks Temporal to cancel only after its own QUEUED→CANCELLED commit, so this is
      // normally a no-op; a cancel from the Temporal UI still leaves the row truthful.
      const settled = await CancellationScope.nonCancellable(() => abandonGenerationJob(input.jobId));
      report(progress.progress, `Cancelled; the job is ${settled.status}`);
    }
    throw err;
  }
}
