import { proxyActivities } from '@temporalio/workflow';

// The webhook bench's baseline (bench/webhooks.ts): the least Temporal does for one delivery
// when every delivery is its own workflow, namely one workflow whose only step is one regular
// activity that POSTs the already signed request. No outbox, no relay, no database.

export interface BaselineDelivery {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface BaselineActivities {
  postBaselineWebhook(d: BaselineDelivery): Promise<void>;
}

const { postBaselineWebhook } = proxyActivities<BaselineActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function baselineWebhookWorkflow(d: BaselineDelivery): Promise<void> {
  await postBaselineWebhook(d);
}
