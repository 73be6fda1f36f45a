import type { Knex } from 'knex';
import { syncDueMetrics, type SyncResult } from '../lib/analytics/sync';
import type { NetworkClient } from '../lib/network/client';

// Activities of the metrics sync (docs/analytics.md). A pass claims its rows before calling the
// network, so a retried activity only redoes what was still due.

export function createAnalyticsActivities(deps: { db: Knex; network: NetworkClient }) {
  return {
    async syncPostMetrics(input: { batch?: number } = {}): Promise<SyncResult> {
      return syncDueMetrics(deps, { batch: input.batch });
    },
  };
}

export type AnalyticsActivities = ReturnType<typeof createAnalyticsActivities>;
