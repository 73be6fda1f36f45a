import { Context } from '@temporalio/activity';
import { WEBHOOK_ENDPOINT } from '../lib/temporal/contracts/deliverWebhook';
import { wakeEndpoint } from '../lib/temporal/start/webhookEndpoint';
import type { AttemptResult, WebhookDeps } from './webhooks';

// The legacy hand-over (docs/webhooks.md "How it runs"): deliverWebhookWorkflow, one workflow
// per delivery, ran before the endpoint workflow existed and stays registered so that its open
// runs replay. Its attempt activity no longer sends; it hands the delivery to the endpoint's
// workflow.

export function createWebhookHandoverActivities({ db, temporal }: WebhookDeps) {
  return {
    /**
     * The attempt of a delivery workflow started before the endpoint workflow existed
     * (deliverWebhookWorkflow, kept registered so that its open runs replay). It no longer
     * sends: it wakes the endpoint's workflow, which delivers the row when it is due (now, since
     * this attempt was due), and ends the old run with a reason saying so. A delivery already
     * finished answers as before.
     */
    async attemptWebhookDelivery(input: { deliveryId: string; attempt: number; retryInMs: number | null }): Promise<AttemptResult> {
      const d = (await db('webhook_deliveries')
        .where({ id: input.deliveryId })
        .first('status', 'failure_reason', 'endpoint_id', 'workspace_id')) as
        { status: string; failure_reason: string | null; endpoint_id: string; workspace_id: string } | undefined;
      if (!d) return { outcome: 'failed', reason: 'delivery_missing: no delivery record' };
      if (d.status === 'delivered') return { outcome: 'delivered' };
      if (d.status === 'failed') return { outcome: 'failed', reason: d.failure_reason ?? 'failed' };
      await wakeEndpoint(await temporal(), Context.current().info.taskQueue, d.endpoint_id, d.workspace_id);
      return { outcome: 'failed', reason: `handed_over: ${WEBHOOK_ENDPOINT.id(d.endpoint_id)} delivers it` };
    },
  };
}
