import type { Client } from '@temporalio/client';
import type { WebhookEndpointInput } from '../../../activities/webhooks';
import type { webhookEndpointWorkflow } from '../../../workflows/webhookEndpoint';
import { SEARCH } from '../../searchAttributes';
import { WEBHOOK_ENDPOINT, webhookDeliveriesReadySignal } from '../contracts/deliverWebhook';
import { startPriority } from './priority';

// The starter of an endpoint's delivery workflow (lib/temporal/contracts/deliverWebhook.ts,
// docs/webhooks.md "How it runs"), for the relay and for old per-pair runs handing over.

/**
 * Signal-with-start of the endpoint's delivery workflow: starts it when no run is open, else
 * only wakes it. Either way the next pass reads the endpoint's open deliveries from the table.
 */
export async function wakeEndpoint(client: Client, taskQueue: string, endpointId: string, workspaceId: string): Promise<void> {
  await client.workflow.signalWithStart<typeof webhookEndpointWorkflow, []>(WEBHOOK_ENDPOINT.type, {
    taskQueue,
    workflowId: WEBHOOK_ENDPOINT.id(endpointId),
    args: [{ endpointId } satisfies WebhookEndpointInput],
    signal: webhookDeliveriesReadySignal,
    signalArgs: [],
    typedSearchAttributes: [
      { key: SEARCH.workspace, value: workspaceId },
      { key: SEARCH.endpoint, value: endpointId },
    ],
    ...startPriority('webhook', workspaceId),
    staticSummary: `Deliver webhooks to ${endpointId}`,
  });
}
