import { ActivityFailure, ApplicationFailure, patched, proxyActivities, proxyLocalActivities, TimeoutFailure } from '@temporalio/workflow';
import type { Draft, GenerationActivities } from '../activities/generation';
import type { JobStatus } from '../lib/jobs/row';
import { LOCAL_ROW_TRANSITION, localFirst, ROW_TRANSITION, runJobSteps, type JobWorkflowInput } from './jobSteps';

// One workflow per generation job (id = job id, spec 2.12 / 3.2): start the job, have the
// writer draft the post, then write the draft and DONE together, in the job envelope of
// workflows/jobSteps.ts.

const queued = proxyActivities<GenerationActivities>(ROW_TRANSITION);
const local = proxyLocalActivities<GenerationActivities>(LOCAL_ROW_TRANSITION);

/**
 * Histories before it scheduled every row transition as an activity of its own (4 workflow
 * tasks and 3 activity tasks per job); with it they run as local activities (2 workflow tasks
 * and 1 activity task: the writer's), falling back to the queued activity when they keep failing.
 */
export const LOCAL_ROW_STEPS_PATCH = 'generation-local-row-steps';

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

/** Every job workflow's `progress` query (lib/temporal/contracts/jobs.ts). */
export { jobProgressQuery } from '../lib/temporal/contracts/jobs';

export type GenerationWorkflowInput = JobWorkflowInput;
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
  const rowStepsLocal = patched(LOCAL_ROW_STEPS_PATCH);
  return runJobSteps({
    jobId: input.jobId,
    start: rowStepsLocal ? (jobId) => localFirst(local.startGenerationJob, queued.startGenerationJob, jobId) : queued.startGenerationJob,
    working: { progress: 0.1, message: 'Writing the post' },
    work: (jobId): Promise<Draft> => writeGenerationDraft(jobId),
    failureOf,
    saving: 'Saving the draft',
    complete: (draft) =>
      rowStepsLocal
        ? localFirst(local.completeGenerationJob, queued.completeGenerationJob, { jobId: input.jobId, draft })
        : queued.completeGenerationJob({ jobId: input.jobId, draft }),
    ...(rowStepsLocal
      ? {
          fail: (args) => localFirst(local.failGenerationJob, queued.failGenerationJob, args),
          abandon: (jobId) => localFirst(local.abandonGenerationJob, queued.abandonGenerationJob, jobId),
        }
      : {}),
  });
}
