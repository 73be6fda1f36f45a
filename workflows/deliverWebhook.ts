import {
  ActivityCancellationType,
  condition,
  continueAsNew,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  AttemptResult,
  DeliverWebhookInput,
  DeliveryPassResult,
  WebhookActivities,
  WebhookEndpointInput,
} from '../activities/webhooks';
import { oneLine, zonedTime } from '../lib/temporal/details';
import { retryDelayMs, withJitter } from '../lib/webhooks/schedule';
import {
  deliveryStatusQuery,
  endpointDeliveryStatusQuery,
  OPEN_COUNT_CAP,
  webhookDeliveriesReadySignal,
  type DeliverWebhookResult,
  type DeliveryStatus,
  type EndpointDeliveryStatus,
} from '../lib/temporal/contracts/deliverWebhook';
import { workPriority } from '../lib/temporal/contracts/priority';

// Two delivery workflow types (docs/webhooks.md, "How it runs"):
//
// - webhookEndpointWorkflow, id `webhook-endpoint-<endpointId>`: the one that delivers. One per
//   endpoint with work to do; the relay wakes it with a signal (signal-with-start) once per
//   relayed batch, and each pass of a local activity sends every delivery of the endpoint that
//   is due, in event order, records the attempts and tells when the next retry is due. The
//   delivery rows are the truth, so a pass after a crash or a continue-as-new simply carries on.
// - deliverWebhookWorkflow, id `webhook-<eventId>-<endpointId>`: the former one workflow per
//   (event, endpoint). Kept registered, unchanged, so that runs started before the endpoint
//   workflow existed replay; their next attempt hands the delivery over to the endpoint
//   workflow (activities/webhooks.ts) and they close. Remove once none is open.

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

const { deliverDueWebhooks } = proxyLocalActivities<WebhookActivities>({
  // Local: a pass is short (bounded attempts of at most the receiver timeout each) and running
  // it inside the workflow task spares a round of activity tasks through the server. Receiver
  // failures are recorded outcomes; an exception is our own infrastructure (database down) and
  // the pass is retried for as long as it takes. A pass repeated after a crash may repeat a POST
  // that had landed: at-least-once, same Webhook-Id (docs/webhooks.md).
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** An idle endpoint workflow closes after this; the next event's signal-with-start opens a new run. */
const IDLE_CLOSE_MS = 60_000;
/** Continue as new past this many history events (the server also suggests it). */
const HISTORY_LIMIT = 2_000;

/**
 * The endpoint's queue and its last failure, for the operator reading the workflow in the
 * Temporal UI (docs/operations.md "What the workflows show"). Times in UTC: an endpoint belongs
 * to a workspace, not to a project with a calendar zone.
 */
function endpointDetails(r: DeliveryPassResult, passes: number, lastFailure: DeliveryPassResult['lastFailure'] | null): string {
  const depth =
    r.open === undefined
      ? 'Queue depth not counted'
      : r.open > OPEN_COUNT_CAP
        ? `Queue: more than ${OPEN_COUNT_CAP} open deliveries`
        : `Queue: ${r.open} open deliveries`;
  const next = r.more ? 'more due now' : r.nextDueAtMs === null ? 'none waiting' : `next due at ${zonedTime(r.nextDueAtMs)}`;
  const pass = `Pass ${passes}: ${r.attempted} attempted, ${r.delivered} delivered, ${r.retrying} to retry, ${r.failed} failed, ${r.closed} closed.`;
  const failure = lastFailure
    ? `Last failure at ${zonedTime(lastFailure.atMs)}: ${oneLine(lastFailure.error)}.`
    : 'No failure in this run.';
  return `${depth} (${next}). ${pass} ${failure}`;
}

export async function webhookEndpointWorkflow(input: WebhookEndpointInput): Promise<void> {
  let woken = false;
  let lastFailure: DeliveryPassResult['lastFailure'] | null = null;
  const status: EndpointDeliveryStatus = { passes: 0, lastPass: null, nextDueAtMs: null };
  setHandler(webhookDeliveriesReadySignal, () => {
    woken = true;
  });
  setHandler(endpointDeliveryStatusQuery, () => status);
  for (;;) {
    // Anything signalled before this line is covered by the pass: the rows were committed first.
    woken = false;
    const r = await deliverDueWebhooks({ endpointId: input.endpointId });
    status.passes++;
    status.lastPass = r;
    status.nextDueAtMs = r.nextDueAtMs;
    if (r.lastFailure) lastFailure = r.lastFailure;
    setCurrentDetails(endpointDetails(r, status.passes, lastFailure));
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength >= (input.historyLimit ?? HISTORY_LIMIT)) {
      // The next run starts with a pass, which reads every open delivery from the table: a
      // signal that arrives meanwhile loses nothing.
      await continueAsNew<typeof webhookEndpointWorkflow>(input);
    }
    if (r.more) continue;
    if (r.nextDueAtMs === null) {
      // Nothing open. Closing while a signal is on its way is safe: the server refuses to close a
      // workflow with an unhandled signal, and after the close a signal-with-start opens a new run.
      const idleMs = input.idleCloseMs ?? IDLE_CLOSE_MS;
      if (!(await condition(() => woken, idleMs, { summary: `Idle: closes after ${idleMs / 1000} s without new deliveries` }))) return;
    } else {
      const waitMs = r.nextDueAtMs - Date.now();
      if (waitMs > 0) await condition(() => woken, waitMs, { summary: `Until the next retry is due, ${zonedTime(r.nextDueAtMs)}` });
    }
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
