import type { WorkflowName } from './workflowName';

// The contract of the metrics sync (workflows/metricsSync.ts, docs/analytics.md "Sync"): one per
// deployment, started by lib/temporal/start/metricsSync.ts.

export const METRICS_SYNC = {
  type: 'metricsSyncWorkflow' satisfies WorkflowName,
  id: () => 'metrics-sync',
} as const;

export interface MetricsSyncInput {
  intervalSeconds: number;
  batch?: number;
}
