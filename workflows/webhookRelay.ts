import { ActivityCancellationType, continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import { workPriority } from '../lib/temporal/contracts/priority';

// webhookRelayWorkflow (docs/webhooks.md, "How it runs"): moves the outbox's events into
// deliveries and wakes each endpoint's workflow (./webhookEndpoint.ts).

const { relayOutbox } = proxyActivities<WebhookActivities>({
  // A long poll loop: its heartbeat shows it alive, so when a worker dies the relay resumes on
  // another one within the heartbeat timeout. Relaying is idempotent (SKIP LOCKED claims,
  // per-pair workflow ids), so it retries without limit. Cancelling the relay waits until the
  // running batch has finished, so no claim is cut off halfway.
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  // It relays every workspace's events, so it is keyed as the deployment's, explicitly: a run
  // started before starts carried a priority would otherwise put it on the default key.
  priority: workPriority('relay', null),
});

/**
 * The outbox relay (id `webhook-outbox-relay`), started by the worker process. It wakes the
 * endpoint workflows of the deliveries it writes. Each activity run relays for `runMs`; the history stays short by continuing as new every 50 runs.
 */
export async function webhookRelayWorkflow(input: { runMs?: number } = {}): Promise<void> {
  for (let i = 0; i < 50; i++) await relayOutbox({ maxRunMs: input.runMs ?? 60_000 });
  await continueAsNew<typeof webhookRelayWorkflow>(input);
}
