import {
  condition,
  defineQuery,
  defineSignal,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { engagePostWorkflow } from './engagePost';
import type { PublishingActivities, ScheduleSnapshot } from '../activities/publishing';

// One workflow per post (id `publish-<postId>`): a durable timer to scheduledAt + the publish
// delay. A schedule change is a signal that makes it re-read the post; the post row, not the
// signal, is the truth, so signals may be repeated or arrive late without harm.

const { loadSchedule } = proxyActivities<PublishingActivities>({
  // A read: retry freely.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

const { publishPost, markPublishFailed } = proxyActivities<PublishingActivities>({
  // Idempotent by post id (network reference + version check under a row lock), so crashes and
  // timeouts may retry it; network failures come back as outcomes, not exceptions.
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute' },
});

export const scheduleChangedSignal = defineSignal<[number]>('scheduleChanged');
export interface PublishStatus {
  state: 'waiting' | 'publishing' | 'retrying' | 'done';
  version: number | null;
  fireAtMs: number | null;
  attempts: number;
  lastError: string | null;
}
export const publishStatusQuery = defineQuery<PublishStatus>('status');

export type PublishResult = { outcome: 'published'; postUrn: string } | { outcome: 'not_scheduled' } | { outcome: 'failed'; error: string };

function backoffMs(attempt: number, baseSeconds: number): number {
  return Math.min(5 * 60_000, baseSeconds * 1000 * 2 ** Math.min(attempt - 1, 10));
}

async function startEngagement(postId: string): Promise<void> {
  try {
    await startChild(engagePostWorkflow, {
      workflowId: `engage-${postId}`,
      args: [{ postId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      // Once per post: a second publish run for the same post finds the engagement already begun.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: workflowInfo().typedSearchAttributes,
      staticSummary: `Engagement after publish of post ${postId}`,
    });
  } catch (err) {
    log.info('engagement not started again', { postId, err: String(err) });
  }
}

export async function publishPostWorkflow(input: { postId: string }): Promise<PublishResult> {
  let dirty = true;
  let schedule: ScheduleSnapshot | null = null;
  const status: PublishStatus = { state: 'waiting', version: null, fireAtMs: null, attempts: 0, lastError: null };
  setHandler(scheduleChangedSignal, () => {
    dirty = true;
  });
  setHandler(publishStatusQuery, () => status);

  for (;;) {
    if (dirty) {
      dirty = false;
      schedule = await loadSchedule(input.postId);
      status.attempts = 0;
    }
    if (!schedule || schedule.status !== 'scheduled' || schedule.scheduledAtMs === null) {
      status.state = 'done';
      return { outcome: 'not_scheduled' };
    }
    const fireAtMs = schedule.scheduledAtMs + schedule.delaySeconds * 1000;
    const retryUntilMs = fireAtMs + schedule.retryWindowSeconds * 1000;
    status.version = schedule.version;
    status.fireAtMs = fireAtMs;
    status.state = status.attempts ? 'retrying' : 'waiting';
    const waitMs = fireAtMs - Date.now();
    if (waitMs > 0 && (await condition(() => dirty, waitMs))) continue;

    status.state = 'publishing';
    status.attempts++;
    const result = await publishPost({ postId: input.postId, version: schedule.version, attempt: status.attempts, retryUntilMs });
    switch (result.outcome) {
      case 'published':
        status.state = 'done';
        // docs/engagement.md: the engagement runs as an abandoned child, found in the UI by the post id.
        if (result.engage && patched('engagement-after-publish')) await startEngagement(input.postId);
        return { outcome: 'published', postUrn: result.postUrn };
      case 'failed':
        status.state = 'done';
        return { outcome: 'failed', error: result.error };
      case 'stale':
        dirty = true;
        continue;
      case 'transient': {
        status.lastError = result.error;
        const delay = Math.max(backoffMs(status.attempts, schedule.retryBaseSeconds ?? 5), result.retryAfterMs ?? 0);
        if (Date.now() + delay > retryUntilMs) {
          await markPublishFailed({ postId: input.postId, version: schedule.version, error: result.error });
          status.state = 'done';
          return { outcome: 'failed', error: result.error };
        }
        log.info('publish will retry', { postId: input.postId, attempt: status.attempts, delay, error: result.error });
        status.state = 'retrying';
        if (await condition(() => dirty, delay)) continue;
        // Retry at once: the loop sees fireAtMs in the past.
        continue;
      }
    }
  }
}
