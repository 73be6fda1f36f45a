import { TERMINAL_STATUSES, type JobStatus } from '../../lib/jobs/row';
import type { Job } from '../../lib/presenters/jobs';
import { getJob } from '../operations/jobs/jobs';
import type { ProgressReporter, ToolCallContext } from './tool';

// spec 4.9 Progress: with a progressToken, an async tool reports notifications/progress
// (progress 0..1, total 1, optional message): 0 first, updates about every 750 ms, 1.0 at the
// job's terminal state; the tool result follows the last notification. The figures are the
// job's own progress (spec 2.12), read through the same get-job operation as get_job.
//
// An update goes out on every tick, also while the job's figure stands still (a writer that
// takes seconds): a host shows the call as alive, and the message says what it waits on. MCP
// requires each notification's progress to increase, so a tick without news edges the figure
// up by a thousandth of what is left before 1 (heartbeatProgress): within half a percent of the
// job's own figure over the seconds a step takes, and never 1 before the job is final.

export const PROGRESS_INTERVAL_MS = 750;
/** A call that follows a job gives up after this long and answers the job as it stands. */
export const FOLLOW_LIMIT_MS = 15 * 60_000;
/**
 * Pause between the last notification and the result. The MCP SDK client dispatches a
 * notification one microtask later than a response; when both arrive in one network read
 * (common on the SSE transport), the response wins and the final 1.0 is dropped as belonging
 * to a finished request. A separate write a moment later keeps "the result follows the last
 * notification" true for such clients too.
 */
const SETTLE_MS = 25;

/** Highest job figure shown before the terminal state: 1.0 means "done" to a host. */
const BELOW_DONE = 0.99;
/** Share of the distance to 1 that a tick without news adds. */
const HEARTBEAT_STEP = 0.001;

/** The figure of the next update: the job's own when it rose past the last one sent, else the last edged up. */
export function heartbeatProgress(last: number, jobProgress: number): number {
  const job = Math.min(Math.max(jobProgress, 0), BELOW_DONE);
  if (job > last) return job;
  return last + (1 - last) * HEARTBEAT_STEP;
}

/** What a tick says: the job's step and how long it has been on it ("Writing the post, 3 s"). */
function waitingMessage(job: Job, now: number): string {
  const step = job.progress?.message ?? job.status;
  const since = Date.parse(job.progress?.updatedAt ?? job.createdAt);
  if (!Number.isFinite(since) || now < since) return step;
  return `${step}, ${Math.round((now - since) / 1000)} s`;
}

export function progressReporter(send: (progress: number, message?: string) => Promise<void>): ProgressReporter {
  let last = -1;
  return {
    async report(progress, message) {
      // The MCP spec requires each notification's progress to increase.
      if (!(progress > last)) return;
      last = progress;
      await send(progress, message);
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Follows the job of `body` (`{ data: Job }`) to a terminal state, reporting as it goes; answers `{ data: <final Job> }`. */
export async function followJob(ctx: ToolCallContext, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const progress = ctx.progress!;
  const { auth, apiVersion, requestId } = ctx.request;
  let job = body.data as Job;
  await progress.report(0, job.progress?.message ?? 'Queued');
  let shown = 0;
  const started = Date.now();
  const deadline = started + FOLLOW_LIMIT_MS;
  for (let tick = 1; ; tick++) {
    if (TERMINAL_STATUSES.includes(job.status as JobStatus)) {
      await progress.report(1, job.progress?.message ?? job.status);
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      return { data: job };
    }
    if (ctx.signal.aborted || Date.now() > deadline) return { data: job };
    // Ticks keep to the cadence from the start, however long each job read took.
    await sleep(Math.max(0, started + tick * PROGRESS_INTERVAL_MS - Date.now()), ctx.signal);
    // Server-side polling on the caller's behalf: not counted against its read budget.
    job = ((await getJob.handler({ auth, apiVersion, requestId }, { jobId: job.id })) as { data: Job }).data;
    if (TERMINAL_STATUSES.includes(job.status as JobStatus)) continue;
    shown = heartbeatProgress(shown, job.progress?.progress ?? 0);
    await progress.report(shown, waitingMessage(job, Date.now()));
  }
}
