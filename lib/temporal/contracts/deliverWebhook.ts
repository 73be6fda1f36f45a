import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { DeliveryPassResult } from '../../../activities/webhooks';
import type { WorkflowName } from './workflowName';

// The contracts of the webhook workflows (docs/webhooks.md "How it runs"): the relay
// (workflows/webhookRelay.ts), the one delivery workflow per endpoint (workflows/webhookEndpoint.ts),
// and the former one per (event, endpoint) (workflows/deliverWebhook.ts), kept registered so that
// its open runs replay.

export const WEBHOOK_RELAY = {
  type: 'webhookRelayWorkflow' satisfies WorkflowName,
  id: () => 'webhook-outbox-relay',
} as const;

export const WEBHOOK_ENDPOINT = {
  type: 'webhookEndpointWorkflow' satisfies WorkflowName,
  /** docs/webhooks.md: the one delivery workflow of an endpoint (replaces one per pair for new events). */
  id: (endpointId: string) => `webhook-endpoint-${endpointId}`,
} as const;

export const WEBHOOK_DELIVERY = {
  type: 'deliverWebhookWorkflow' satisfies WorkflowName,
  /** One per (event, endpoint): a second start for the pair is rejected, so each is delivered once. */
  id: (eventId: string, endpointId: string) => `webhook-${eventId}-${endpointId}`,
} as const;

export type DeliverWebhookResult = { outcome: 'delivered'; attempts: number } | { outcome: 'failed'; attempts: number; reason: string };

/** Where the delivery stands: the attempt in flight or last made, and when the next one is due. */
export interface DeliveryStatus {
  state: 'attempting' | 'waiting' | 'delivered' | 'failed';
  attempt: number;
  nextAttemptAtMs: number | null;
  lastError: string | null;
}
export const deliveryStatusQuery = defineQuery<DeliveryStatus>('deliveryStatus');

/** The relay's wake-up call: new deliveries for this endpoint are written (the rows say which). */
export const webhookDeliveriesReadySignal = defineSignal('webhookDeliveriesReady');

/** A pass counts an endpoint's open deliveries up to this and shows a larger backlog as more (it must not count a million rows each pass). */
export const OPEN_COUNT_CAP = 10_000;

/** What the endpoint workflow last did, for operators (a query adds nothing to the history). */
export interface EndpointDeliveryStatus {
  passes: number;
  lastPass: DeliveryPassResult | null;
  nextDueAtMs: number | null;
}
export const endpointDeliveryStatusQuery = defineQuery<EndpointDeliveryStatus>('endpointDeliveryStatus');
