import type { Client } from '@temporalio/client';
import type { WebhookEndpointInput } from '../../activities/webhooks';
import { webhookDeliveriesReadySignal, webhookEndpointWorkflow } from '../../workflows/deliverWebhook';
import { SEARCH, workflowIds } from '../temporal';

// Client side of an endpoint's delivery workflow (docs/webhooks.md "How it runs"), shared by the
// outbox relay and the operator's redelivery (bin/admin webhook redeliver), so both start it the
// same way.

/**
 * Signal-with-start of the endpoint's delivery workflow: starts it when no run is open, else
 * only wakes it. Either way the next pass reads the endpoint's open deliveries from the table.
 */
export async function wakeEndpointDelivery(client: Client, taskQueue: string, endpointId: string, workspaceId: string): Promise<void> {
  await client.workflow.signalWithStart(webhookEndpointWorkflow, {
    taskQueue,
    workflowId: workflowIds.webhookEndpoint(endpointId),
    args: [{ endpointId } satisfies WebhookEndpointInput],
    signal: webhookDeliveriesReadySignal,
    signalArgs: [],
    typedSearchAttributes: [
      { key: SEARCH.workspace, value: workspaceId },
      { key: SEARCH.endpoint, value: endpointId },
    ],
    staticSummary: `Deliver webhooks to ${endpointId}`,
  });
}
