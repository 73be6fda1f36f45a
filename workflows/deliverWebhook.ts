import {
  ActivityCancellationType,
  continueAsNew,
  defineQuery,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { AttemptResult, DeliverWebhookInput, WebhookActivities } from '../activities/webhooks';
import { retryDelayMs, withJitter } from '../lib/webhooks/schedule';

// One workflow per (event, endpoint), id `webhook-<eventId>-<endpointId>` (ARCHITECTURE.md,
// Temporal table): signed attempts on the retry schedule of lib/webhooks/schedule.ts, durable
// timers in between, ending delivered or recorded as permanently failed with a reason (spec 6).

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

export type DeliverWebhookResult = { outcome: 'delivered'; attempts: number } | { outcome: 'failed'; attempts: number; reason: string };

/** Where the delivery stands: the attempt in flight or last made, and when the next one is due. */
export interface DeliveryStatus {
  state: 'attempting' | 'waiting' | 'delivered' | 'failed';
  attempt: number;
  nextAttemptAtMs: number | null;
  lastError: string | null;
}
export const deliveryStatusQuery = defineQuery<DeliveryStatus>('deliveryStatus');

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
    await sleep(waitMs);
  }
}

const { relayOutbox } = proxyActivities<WebhookActivities>({
  // A long poll loop: its heartbeat shows it alive, so when a worker dies the relay resumes on
  // another one within the heartbeat timeout. Relaying is idempotent (SKIP LOCKED claims,
  // per-pair workflow ids), so it retries without limit. Cancelling the relay waits until the
  // running batch has finished, so no claim is cut off halfway.
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * The outbox relay (id `webhook-outbox-relay`), started by the worker process. Each activity
 * run relays for `runMs`; the history stays short by continuing as new every 50 runs.
 */
export async function webhookRelayWorkflow(input: { runMs?: number } = {}): Promise<void> {
  for (let i = 0; i < 50; i++) await relayOutbox({ maxRunMs: input.runMs ?? 60_000 });
  await continueAsNew<typeof webhookRelayWorkflow>(input);
}
