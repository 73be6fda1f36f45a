import { condition, continueAsNew, proxyLocalActivities, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import type { DeliveryPassResult, WebhookActivities, WebhookEndpointInput } from '../activities/webhooks';
import { zonedTime, oneLine } from '../lib/temporal/details';
import {
  endpointDeliveryStatusQuery,
  OPEN_COUNT_CAP,
  webhookDeliveriesReadySignal,
  type EndpointDeliveryStatus,
} from '../lib/temporal/contracts/deliverWebhook';

// webhookEndpointWorkflow, id `webhook-endpoint-<endpointId>` (docs/webhooks.md, "How it runs"):
// the workflow that delivers. One per endpoint with work to do; the relay (./webhookRelay.ts)
// wakes it with a signal (signal-with-start) once per relayed batch, and each pass of a local
// activity sends every delivery of the endpoint that is due, in event order, records the
// attempts and tells when the next retry is due. The delivery rows are the truth, so a pass
// after a crash or a continue-as-new simply carries on.

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
