import assert from 'node:assert/strict';
import { maintenanceWorkflow } from '../../workflows/maintenance';
import { maybeRecordTierHistory } from '../support/histories';
import { waitFor } from '../support/wait';
import { withWorker } from '../support/workflowEnv';

// The reconciler (workflows/maintenance.ts): each pass runs the publish-and-health `reconcile`
// activity, then the maintenance activity of its own for review rounds, jobs and spend.
describe('maintenance workflow (workflow tier: stubbed activities, own task queue)', function () {
  this.timeout(60_000);

  it('each pass reconciles publishing and health, then reviews, jobs and spend', async () => {
    const calls: string[] = [];
    const activities = {
      async reconcile() {
        calls.push('reconcile');
        return { synced: 0, healthStarted: 0, healthChecked: 0 };
      },
      async reconcileReviewsAndJobs() {
        calls.push('reconcileReviewsAndJobs');
        return { reviewsStarted: 0, jobsStarted: 0, jobsSettled: 0 };
      },
    };
    await withWorker(activities, async (ctx) => {
      const handle = await ctx.client.workflow.start(maintenanceWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `maintenance-${ctx.taskQueue}`,
        args: [{ intervalSeconds: 0.2 }],
      });
      await waitFor(async () => calls.length >= 4, 20_000, 'two passes', 50);
      await handle.terminate('two passes are enough');
      assert.deepEqual(calls.slice(0, 4), ['reconcile', 'reconcileReviewsAndJobs', 'reconcile', 'reconcileReviewsAndJobs']);
      await maybeRecordTierHistory(ctx, handle.workflowId, 'maintenance-own-activity');
    });
  });
});
