import { proxyLocalActivities, setCurrentDetails, setHandler, sleep } from '@temporalio/workflow';
import type { AttemptResult, DeliverWebhookInput, WebhookActivities } from '../activities/webhooks';
import { oneLine, zonedTime } from '../lib/temporal/details';
import { retryDelayMs, withJitter } from '../lib/webhooks/schedule';
import { deliveryStatusQuery, type DeliverWebhookResult, type DeliveryStatus } from '../lib/temporal/contracts/deliverWebhook';

// deliverWebhookWorkflow, id `webhook-<eventId>-<endpointId>` (docs/webhooks.md, "How it runs"):
// the former one workflow per (event, endpoint). Deliveries now go through the endpoint's
// workflow (./webhookEndpoint.ts). Kept registered, unchanged, so that runs started before the
// endpoint workflow existed replay; their next attempt hands the delivery over to the endpoint
// workflow (activities/webhooks.ts) and they close. Remove once none is open.

const { attemptWebhookDelivery } = proxyLocalActivities<WebhookActivities>({
  // Local: an attempt is short (the POST is bounded by the 10 s receiver timeout, DNS included,
  // plus two queries), and running it inside the workflow task saves the activity task's trips
  // through the server, which is what limits thousands of small deliveries (bench/webhooks.ts).
  // Receiver failures come back as outcomes, so an exception here is our own infrastructure
  // (database down, worker crash): retry it for as long as it takes rather than drop the event.
  // A retry after a crash may repeat a POST that had landed; receivers de-duplicate on the
  // event id (docs/webhooks.md), and the attempt record is keyed by its number.
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function deliverWebhookWorkflow(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
  const maxAttempts = Math.max(1, input.retry.maxAttempts);
  const status: DeliveryStatus = { state: 'attempting', attempt: 0, nextAttemptAtMs: null, lastError: null };
  // A query handler adds no command, so histories recorded before it still replay.
  setHandler(deliveryStatusQuery, () => status);
  for (let attempt = 1; ; attempt++) {
    // Math.random is seeded by the workflow runtime, so the jitter replays identically.
    const waitMs = attempt < maxAttempts ? withJitter(retryDelayMs(attempt, input.retry.baseMs), Math.random()) : null;
    status.state = 'attempting';
    status.attempt = attempt;
    status.nextAttemptAtMs = null;
    const r: AttemptResult = await attemptWebhookDelivery({ deliveryId: input.deliveryId, attempt, retryInMs: waitMs });
    if (r.outcome === 'delivered') {
      status.state = 'delivered';
      return { outcome: 'delivered', attempts: attempt };
    }
    status.lastError = r.outcome === 'failed' ? r.reason : r.error;
    if (r.outcome === 'failed' || waitMs === null) {
      status.state = 'failed';
      return { outcome: 'failed', attempts: attempt, reason: status.lastError };
    }
    status.state = 'waiting';
    status.nextAttemptAtMs = Date.now() + waitMs;
    setCurrentDetails(
      `Attempt ${attempt} failed (${oneLine(status.lastError)}); attempt ${attempt + 1} at ${zonedTime(status.nextAttemptAtMs)}.`,
    );
    await sleep(waitMs, { summary: `Retry wait before delivery attempt ${attempt + 1}` });
  }
}
