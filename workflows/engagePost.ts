import { proxyActivities, sleep } from '@temporalio/workflow';
import { setHandler } from '@temporalio/workflow';
import type { EngagementActivities, EngagementResult } from '../activities/engagement';
import { engagementStatusQuery, type EngagementStatus } from '../lib/temporal/contracts/engagePost';

// Engagement after publish (docs/engagement.md; spec 4.4 autoLike / autoComment): started by
// the publish workflow as an abandoned child (id `engage-<postId>`) once the post is live. Each
// amplifier account likes and/or comments after its own jittered delay, so the engagement looks
// human; each action is an idempotent activity keyed by (post, account, kind).

const { planEngagement } = proxyActivities<EngagementActivities>({
  // A read (and skipped rows written once): retry freely.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

const { engage } = proxyActivities<EngagementActivities>({
  // Exactly once by the (post, account, kind) row and the network reference; transient network
  // failures throw and are retried with backoff, for at most a day.
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '10 minutes', backoffCoefficient: 2 },
  scheduleToCloseTimeout: '1 day',
});

// The query is the workflow's contract (lib/temporal/contracts/engagePost.ts).
export { engagementStatusQuery, type EngagementStatus } from '../lib/temporal/contracts/engagePost';

export async function engagePostWorkflow(input: { postId: string }): Promise<EngagementStatus> {
  const status: EngagementStatus = { planned: 0, done: 0, skipped: 0, failed: 0 };
  setHandler(engagementStatusQuery, () => status);
  const plan = await planEngagement(input.postId);
  status.planned = plan.actions.length;
  await Promise.all(
    plan.actions.map(async (action) => {
      // Math.random is deterministic inside a workflow (seeded by the run), so replay waits the same.
      const delayMs = plan.minDelayMs + Math.floor(Math.random() * (plan.maxDelayMs - plan.minDelayMs + 1));
      if (delayMs > 0)
        await sleep(delayMs, { summary: `Human-like delay before the ${action.kind} by amplifier project ${action.projectId}` });
      let result: EngagementResult;
      try {
        result = await engage({ postId: input.postId, ...action });
      } catch {
        result = { state: 'failed', already: false };
      }
      status[result.state]++;
    }),
  );
  return status;
}
