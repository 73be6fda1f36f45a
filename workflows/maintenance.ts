import { continueAsNew, patched, proxyActivities, sleep, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { MaintenanceActivities } from '../activities/maintenance';
import type { PublishingActivities } from '../activities/publishing';
import type { MaintenanceInput } from '../lib/temporal/contracts/maintenance';
import { workPriority } from '../lib/temporal/contracts/priority';

// The reconciler (id `maintenance-reconciler`): every 30 s, catches up schedule changes whose
// signal never reached a publish workflow and starts missing health workflows (`reconcile`),
// then starts lost review and job workflows and settles unsettled spend (`reconcileReviewsAndJobs`).
//
// Before PATCH_OWN_ACTIVITY `reconcile` did both; a history recorded then has no second activity
// per pass, so it replays without one, and every pass run after the deploy takes the new path.
export const PATCH_OWN_ACTIVITY = 'maintenance-reviews-jobs-activity';

const OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
  // Every workspace's work: background, on the deployment's fairness key, whatever the run was
  // started with (lib/temporal/contracts/priority.ts).
  priority: workPriority('maintenance', null),
};
const { reconcile } = proxyActivities<PublishingActivities>(OPTIONS);
const { reconcileReviewsAndJobs } = proxyActivities<MaintenanceActivities>(OPTIONS);

export async function maintenanceWorkflow(input: MaintenanceInput): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await reconcile();
    if (patched(PATCH_OWN_ACTIVITY)) await reconcileReviewsAndJobs();
    await sleep(input.intervalSeconds * 1000, { summary: `Reconcile interval (${input.intervalSeconds} s)` });
  }
  if (workflowInfo().historyLength > 0) await continueAsNew<typeof maintenanceWorkflow>(input);
}
