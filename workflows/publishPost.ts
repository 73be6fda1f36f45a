import {
  condition,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { engagePostWorkflow } from './engagePost';
import { ENGAGE_POST } from '../lib/temporal/contracts/engagePost';
import { WORK_PRIORITY } from '../lib/temporal/contracts/priority';
import {
  scheduleChangedSignal,
  publishStatusQuery,
  type PublishInput,
  type PublishResult,
  type PublishStatus,
} from '../lib/temporal/contracts/publishPost';
import type { PublishingActivities } from '../activities/publishing';
import type { ScheduleSnapshot } from '../lib/publishing/schedule';
import { oneLine, span, zonedTime } from '../lib/temporal/details';

// One workflow per post (id `publish-<postId>`): a durable timer to scheduledAt + the publish
// delay. A schedule change is a signal; the post row, not the signal, is the truth, so signals
// may be repeated or arrive late without harm.
//
// Since the patch PATCH_CARRIED (docs/publishing.md "Temporal actions per post"), the schedule
// arrives with the start input and with each `scheduleChanged` signal, so the workflow arms its
// timer in its first task without a `loadSchedule` activity, and the publish step runs as a
// local activity inside the workflow task the timer wakes: a post costs the tasks of a bare
// timer. A signal without a snapshot, or a publish step that finds the version moved (`stale`),
// still reads the row. Histories recorded before the patch keep their old path.
export const PATCH_CARRIED = 'publish-carried-schedule-local-step';

// Since this patch a stale publish step's schedule (the row as its lock found it) is taken up
// as a signal's snapshot is, instead of a `loadSchedule` activity and one more workflow task.
export const PATCH_STALE_CARRIES = 'publish-stale-carries-schedule';

const { loadSchedule } = proxyActivities<PublishingActivities>({
  // A read: retry freely.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

const { publishPost, markPublishFailed } = proxyActivities<PublishingActivities>({
  // Idempotent by post id (network reference + version check under a row lock), so crashes and
  // timeouts may retry it; network failures come back as outcomes, not exceptions. It
  // heartbeats, so a worker killed mid-publish hands it on after the heartbeat timeout rather
  // than the start-to-close timeout.
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute' },
});

const local = proxyLocalActivities<PublishingActivities>({
  // The same step inside the workflow task: a worker killed mid-publish loses the workflow task,
  // which times out (10 s) and runs again on another worker, publish step included.
  startToCloseTimeout: '1 minute',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute' },
});

// The signal, the query and the input and result types are the workflow's contract, shared with
// its starter (lib/temporal/start/publishPost.ts).
export {
  scheduleChangedSignal,
  publishStatusQuery,
  type CarriedSchedule,
  type PublishInput,
  type PublishResult,
  type PublishStatus,
} from '../lib/temporal/contracts/publishPost';

function backoffMs(attempt: number, baseSeconds: number): number {
  return Math.min(5 * 60_000, baseSeconds * 1000 * 2 ** Math.min(attempt - 1, 10));
}

async function startEngagement(postId: string): Promise<void> {
  try {
    await startChild(engagePostWorkflow, {
      workflowId: ENGAGE_POST.id(postId),
      args: [{ postId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      // Once per post: a second publish run for the same post finds the engagement already begun.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: workflowInfo().typedSearchAttributes,
      // Background, behind publishes; the fairness key (the workspace) is inherited from this run.
      priority: { priorityKey: WORK_PRIORITY.engagement },
      staticSummary: `Engagement after publish of post ${postId}`,
    });
  } catch (err) {
    log.info('engagement not started again', { postId, err: String(err) });
  }
}

/**
 * What the workflow is doing, for the operator reading it in the Temporal UI (docs/operations.md
 * "What the workflows show"), with times in the post's zone. Current details and timer summaries
 * are metadata: they change no command, so histories replay unchanged.
 */
function waitingDetails(schedule: ScheduleSnapshot, fireAtMs: number): string {
  const why = schedule.delaySeconds
    ? `the scheduled time ${zonedTime(schedule.scheduledAtMs!, schedule.timeZone)} plus the ${span(schedule.delaySeconds * 1000)} publish delay`
    : 'the scheduled time';
  return `Waiting to publish at ${zonedTime(fireAtMs, schedule.timeZone)}: ${why}. Schedule version ${schedule.version}; a move earlier wakes it, a later one or taking it off the schedule is read when it wakes.`;
}

export async function publishPostWorkflow(input: PublishInput): Promise<PublishResult> {
  const carriedPath = patched(PATCH_CARRIED);
  let dirty = true;
  let schedule: ScheduleSnapshot | null = null;
  // The newest snapshot handed in and not yet taken up; undefined: read the row.
  let carried: ScheduleSnapshot | null | undefined = carriedPath ? input.schedule : undefined;
  let knownVersion = carried ? carried.version : -1;
  const status: PublishStatus = { state: 'waiting', version: null, fireAtMs: null, attempts: 0, lastError: null };
  setHandler(scheduleChangedSignal, (_version, payload) => {
    if (!carriedPath) {
      dirty = true;
      return;
    }
    if (payload && payload.schedule === null) {
      carried = null;
    } else if (payload && payload.schedule) {
      // A snapshot older than one already seen (signals from two API processes crossing) is dropped.
      if (payload.schedule.version < knownVersion) return;
      carried = payload.schedule;
      knownVersion = payload.schedule.version;
    } else {
      // A signal with the version only (an older API process): read the row.
      carried = undefined;
    }
    dirty = true;
  });
  setHandler(publishStatusQuery, () => status);

  for (;;) {
    if (dirty) {
      dirty = false;
      if (carried !== undefined) {
        schedule = carried;
        carried = undefined;
      } else {
        schedule = await loadSchedule(input.postId);
      }
      if (schedule && schedule.version > knownVersion) knownVersion = schedule.version;
      status.attempts = 0;
    }
    if (!schedule || schedule.status !== 'scheduled' || schedule.scheduledAtMs === null) {
      status.state = 'done';
      setCurrentDetails(
        schedule
          ? `Not publishing: the post's status is ${schedule.status}${schedule.status === 'scheduled' ? ' without a time' : ''} (schedule version ${schedule.version}).`
          : 'Not publishing: the post was deleted.',
      );
      return { outcome: 'not_scheduled' };
    }
    const fireAtMs = schedule.scheduledAtMs + schedule.delaySeconds * 1000;
    const retryUntilMs = fireAtMs + schedule.retryWindowSeconds * 1000;
    status.version = schedule.version;
    status.fireAtMs = fireAtMs;
    status.state = status.attempts ? 'retrying' : 'waiting';
    // The post's turn among its workspace's posts of that instant (lib/publishing/turns.ts);
    // the retry window still counts from the fire time.
    const waitMs = fireAtMs + (schedule.turnMs ?? 0) - Date.now();
    if (waitMs > 0) {
      if (!status.attempts) setCurrentDetails(waitingDetails(schedule, fireAtMs));
      const summary = `Publish time ${zonedTime(fireAtMs, schedule.timeZone)} (schedule version ${schedule.version})`;
      if (await condition(() => dirty, waitMs, { summary })) continue;
    }

    status.state = 'publishing';
    status.attempts++;
    setCurrentDetails(`Publishing: attempt ${status.attempts}, schedule version ${schedule.version}.`);
    const step = { postId: input.postId, version: schedule.version, attempt: status.attempts, retryUntilMs };
    const result = carriedPath ? await local.publishPost(step) : await publishPost(step);
    switch (result.outcome) {
      case 'published':
        status.state = 'done';
        setCurrentDetails(`Published as ${result.postUrn} (attempt ${status.attempts}, schedule version ${schedule.version}).`);
        // docs/engagement.md: the engagement runs as an abandoned child, found in the UI by the post id.
        if (result.engage && patched('engagement-after-publish')) await startEngagement(input.postId);
        return { outcome: 'published', postUrn: result.postUrn };
      case 'failed':
        status.state = 'done';
        setCurrentDetails(`Failed, not retried: ${oneLine(result.error)} (attempt ${status.attempts}).`);
        return { outcome: 'failed', error: result.error };
      case 'stale': {
        // The row moved on (a move later or off the schedule leaves the workflow asleep until
        // here: lib/publishing/schedule.ts wakesWorkflow). Since PATCH_STALE_CARRIES the step
        // hands back the row as its lock found it, which the workflow takes up in this same task
        // unless a newer snapshot was handed in meanwhile (kept in `carried`); without one it
        // reads the row.
        const row = result.schedule !== undefined && patched(PATCH_STALE_CARRIES) ? result.schedule : undefined;
        if (row === undefined || row === null) carried = row;
        else if (row.version >= knownVersion) {
          carried = row;
          knownVersion = row.version;
        }
        dirty = true;
        continue;
      }
      case 'transient': {
        status.lastError = result.error;
        const delay = Math.max(backoffMs(status.attempts, schedule.retryBaseSeconds ?? 5), result.retryAfterMs ?? 0);
        if (Date.now() + delay > retryUntilMs) {
          await markPublishFailed({ postId: input.postId, version: schedule.version, error: result.error });
          status.state = 'done';
          setCurrentDetails(
            `Failed after ${status.attempts} attempts: the next would fall past the retry window, which closes at ` +
              `${zonedTime(retryUntilMs, schedule.timeZone)}; last error: ${oneLine(result.error)}.`,
          );
          return { outcome: 'failed', error: result.error };
        }
        log.info('publish will retry', { postId: input.postId, attempt: status.attempts, delay, error: result.error });
        status.state = 'retrying';
        const retryAtMs = Date.now() + delay;
        setCurrentDetails(
          `Waiting to retry: attempt ${status.attempts} failed (${oneLine(result.error)}); attempt ${status.attempts + 1} at ` +
            `${zonedTime(retryAtMs, schedule.timeZone)}, retries until ${zonedTime(retryUntilMs, schedule.timeZone)}.`,
        );
        if (await condition(() => dirty, delay, { summary: `Backoff before publish attempt ${status.attempts + 1}` })) continue;
        // Retry at once: the loop sees fireAtMs in the past.
        continue;
      }
    }
  }
}
