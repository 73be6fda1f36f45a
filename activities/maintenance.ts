import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { advanceRollupBackfill } from '../lib/analytics/rollup';
import { reconcileQueuedJobs } from '../lib/jobs/reconcile';
import { log } from '../lib/logger';
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
     * settlement did not follow (docs/generation.md "Spend and budgets"), and carries the hourly
     * rollup's backfill on by up to 20 s of steps while a migration has left one to do
     * (docs/analytics.md "Deploying the rollup"). Safe to run twice: a second start under the
     * same workflow id is rejected, settlement is guarded by the row, and each backfill step
     * moves a mark in its own transaction.
     */
    async reconcileReviewsAndJobs(): Promise<{
      reviewsStarted: number;
      jobsStarted: number;
      jobsSettled: number;
      rollupPostsCounted: number;
    }> {
      const reviewsStarted = await reconcileReviews(await temporal(), db);
      const jobsStarted = await reconcileQueuedJobs(db);
      const jobsSettled = await settleUnsettledJobs(db);
      // The backfill's own failure is logged and left to the next pass; it fails no other duty.
      let rollupPostsCounted = 0;
      try {
        rollupPostsCounted = (await advanceRollupBackfill(db)).counted;
      } catch (err) {
        log.error('rollup backfill step failed', { err: err instanceof Error ? err.message : String(err) });
      }
      return { reviewsStarted, jobsStarted, jobsSettled, rollupPostsCounted };
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
