import { proxyActivities } from '@temporalio/workflow';

// The webhooks bench's baseline (bench/webhooks.ts): one workflow per delivery whose only step is
// one activity POSTing the already signed request. No outbox, no relay, no database.

export type BaselineDelivery = { url: string; body: string; headers: Record<string, string> };

const { postBaselineWebhook } = proxyActivities<{ postBaselineWebhook(d: BaselineDelivery): Promise<void> }>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function baselineWebhookWorkflow(d: BaselineDelivery): Promise<void> {
  await postBaselineWebhook(d);
}
