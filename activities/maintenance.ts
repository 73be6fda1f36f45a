import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { reconcileQueuedJobs } from '../lib/jobs/reconcile';
import { settleUnsettledJobs } from '../lib/spend/settlement';
import { reconcileReviews } from '../lib/publishing/review';

// The reconciler's work beyond publishing (workflows/maintenance.ts): the publish and health
// side is the `reconcile` activity of activities/publishing.ts; this is the rest.

export interface MaintenanceDeps {
  db: Knex;
  temporal: () => Promise<Client>;
}

export function createMaintenanceActivities({ db, temporal }: MaintenanceDeps) {
  return {
    /**
     * Finishes what a request committed but could not complete (the API died in between, Temporal
     * was down): starts the workflows of pending review rounds (docs/review.md) and of QUEUED jobs
     * (docs/generation.md) whose start was lost, and settles the AI spend of final jobs whose
     * settlement did not follow (docs/generation.md "Spend and budgets"). Safe to run twice: a
     * second start under the same workflow id is rejected, and settlement is guarded by the row.
     */
    async reconcileReviewsAndJobs(): Promise<{ reviewsStarted: number; jobsStarted: number; jobsSettled: number }> {
      const reviewsStarted = await reconcileReviews(await temporal(), db);
      const jobsStarted = await reconcileQueuedJobs(db);
      const jobsSettled = await settleUnsettledJobs(db);
      return { reviewsStarted, jobsStarted, jobsSettled };
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
