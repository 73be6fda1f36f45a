import {
  CancellationScope,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type { GenerationActivities } from '../activities/generation';
import type { JobProgress, JobStatus } from '../lib/jobs/row';
import { jobProgressQuery } from '../lib/temporal/contracts/jobs';

// The job envelope every generation job shares (spec 2.12 / 3.2; docs/media.md "Image
// generation"): start the row QUEUED → RUNNING, do the one costly step, then complete the row
// (DONE) or fail it with the step's code, answering a `progress` query throughout. The job row
// is the truth about the job's state; a workflow only moves it through guarded transitions, so
// it never decides anything the row has not agreed to (a cancel that won the race simply ends it).

/**
 * Row transitions: short Postgres transactions guarded by the job's status, so a retry after a
 * lost answer finds its own work already done. Retried without limit: giving up would strand a
 * job (and its spend reservation) in RUNNING. Milliseconds of work, so a short timeout: an
 * attempt lost with its worker (or its task lost in transit) is retried soon.
 */
export const ROW_TRANSITION: ActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
};

const { failGenerationJob, abandonGenerationJob } = proxyActivities<GenerationActivities>(ROW_TRANSITION);

/**
 * A row transition run as a local activity: inside the workflow task that reaches it, with no
 * activity task and no second workflow task to hand its result back (docs/generation.md
 * "Latency"). Only a few quick attempts: a transition that keeps failing (job processing paused,
 * Postgres away) falls back to the same activity scheduled on the queue, with ROW_TRANSITION's
 * unbounded retries, so a long wait is a scheduled retry on the server, not a workflow task
 * kept open on a worker.
 */
export const LOCAL_ROW_TRANSITION: LocalActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '1 second', maximumAttempts: 3 },
};

/** Runs `local` (a local activity), and the queued `remote` with the same argument if it fails. */
export async function localFirst<A, R>(local: (arg: A) => Promise<R>, remote: (arg: A) => Promise<R>, arg: A): Promise<R> {
  try {
    return await local(arg);
  } catch (err) {
    if (isCancellation(err)) throw err;
    return remote(arg);
  }
}

/** The input every job workflow takes; the workflow id is the job id (the jobs' contract). */
export type { JobWorkflowInput } from '../lib/temporal/contracts/jobs';

export type JobOutcomeStatus = JobStatus | 'MISSING';
export interface JobFailure {
  code: string;
  message: string;
}

export interface JobSteps<W, O extends { status: JobOutcomeStatus }> {
  jobId: string;
  /** QUEUED → RUNNING, or the reason it cannot start. */
  start(jobId: string): Promise<{ running: true } | { running: false; status: JobOutcomeStatus }>;
  /** The progress shown while the costly step runs. */
  working: { progress: number; message: string };
  /** The costly step (a model call): its failure fails the job with `failureOf`'s code. */
  work(jobId: string): Promise<W>;
  failureOf(err: unknown): JobFailure;
  /** The progress message while the result is saved. */
  saving: string;
  /** RUNNING → DONE with the step's result; run even if a cancel arrives meanwhile. */
  complete(result: W): Promise<O>;
  /** The failure and cancellation transitions; the queued activities when not given. */
  fail?: GenerationActivities['failGenerationJob'];
  abandon?: GenerationActivities['abandonGenerationJob'];
}

export async function runJobSteps<W, O extends { status: JobOutcomeStatus }>(
  steps: JobSteps<W, O>,
): Promise<O | { status: JobOutcomeStatus; errorCode?: string }> {
  const { jobId } = steps;
  const fail = steps.fail ?? failGenerationJob;
  const abandon = steps.abandon ?? abandonGenerationJob;
  let progress: JobProgress = { progress: 0, updatedAt: new Date().toISOString(), message: 'Waiting for a worker' };
  // The progress query's answer is also the workflow's current details, what an operator reads
  // in the Temporal UI (docs/operations.md "What the workflows show"): metadata, no command.
  const report = (fraction: number, message: string) => {
    progress = { progress: fraction, updatedAt: new Date().toISOString(), message };
    setCurrentDetails(`${message}: ${Math.round(fraction * 100)}% (job ${jobId}, since ${progress.updatedAt}).`);
  };
  report(progress.progress, progress.message);
  setHandler(jobProgressQuery, () => progress);

  try {
    const started = await steps.start(jobId);
    if (!started.running) {
      report(progress.progress, started.status === 'CANCELLED' ? 'Cancelled' : `Not started: the job is ${started.status}`);
      return { status: started.status };
    }

    report(steps.working.progress, steps.working.message);
    let result: W;
    try {
      result = await steps.work(jobId);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const failure = steps.failureOf(err);
      const failed = await CancellationScope.nonCancellable(() => fail({ jobId, errorCode: failure.code, errorMessage: failure.message }));
      report(progress.progress, `Failed: ${failure.code}`);
      return { status: failed.status, errorCode: failure.code };
    }

    report(0.9, steps.saving);
    // Once the costly step has answered, its result is saved even if a cancel request arrives
    // now: only a QUEUED job can be cancelled (spec 3.2).
    const done = await CancellationScope.nonCancellable(() => steps.complete(result));
    report(1, done.status === 'DONE' ? 'Done' : `Ended as ${done.status}`);
    return done;
  } catch (err) {
    if (isCancellation(err)) {
      // The API asks Temporal to cancel only after its own QUEUED→CANCELLED commit, so this is
      // normally a no-op; a cancel from the Temporal UI still leaves the row truthful.
      const settled = await CancellationScope.nonCancellable(() => abandon(jobId));
      report(progress.progress, `Cancelled; the job is ${settled.status}`);
    }
    throw err;
  }
}
