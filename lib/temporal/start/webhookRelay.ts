import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { webhookRelayWorkflow } from '../../../workflows/webhookRelay';
import { config } from '../../config';
import { WEBHOOK_RELAY } from '../contracts/deliverWebhook';
import { startPriority } from './priority';

// The starter of the outbox relay (lib/temporal/contracts/deliverWebhook.ts, spec 6): one for the
// whole deployment; it moves committed outbox events into webhook delivery workflows, and any
// worker may run its activity.

/** Starts the relay unless it already runs; true when this call started it. */
export async function ensureWebhookRelay(client: Client): Promise<boolean> {
  try {
    await client.workflow.start<typeof webhookRelayWorkflow>(WEBHOOK_RELAY.type, {
      taskQueue: config.temporalTaskQueue,
      workflowId: WEBHOOK_RELAY.id(),
      args: [{}],
      ...startPriority('relay', null),
      staticSummary: 'Relays outbox events to webhook delivery workflows',
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
