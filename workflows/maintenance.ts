import { continueAsNew, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { PublishingActivities } from '../activities/publishing';

// The reconciler (id `maintenance-reconciler`): every 30 s, catches up schedule changes whose
// signal never reached a publish workflow and starts missing health workflows.

const { reconcile } = proxyActivities<PublishingActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
});

export async function maintenanceWorkflow(input: { intervalSeconds: number }): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await reconcile();
    await sleep(input.intervalSeconds * 1000);
  }
  if (workflowInfo().historyLength > 0) await continueAsNew<typeof maintenanceWorkflow>(input);
}
