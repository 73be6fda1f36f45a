import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { metricsSyncWorkflow } from '../../workflows/metricsSync';
import { config } from '../config';

// The one metrics-sync workflow of a deployment (docs/analytics.md "Sync").
export const METRICS_SYNC_WORKFLOW_ID = 'metrics-sync';

/** Starts the metrics-sync workflow unless it is already running; true when this call started it. */
export async function ensureMetricsSync(
  client: Client,
  opts: { intervalSeconds?: number; batch?: number; workflowId?: string; taskQueue?: string } = {},
): Promise<boolean> {
  try {
    await client.workflow.start(metricsSyncWorkflow, {
      taskQueue: opts.taskQueue ?? config.temporalTaskQueue,
      workflowId: opts.workflowId ?? METRICS_SYNC_WORKFLOW_ID,
      args: [
        { intervalSeconds: opts.intervalSeconds ?? config.analytics.syncIntervalSeconds, batch: opts.batch ?? config.analytics.syncBatch },
      ],
      staticSummary: 'Syncs metrics of published posts from the network on a decaying cadence',
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
