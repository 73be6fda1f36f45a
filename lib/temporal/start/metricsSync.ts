import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { metricsSyncWorkflow } from '../../../workflows/metricsSync';
import { config } from '../../config';
import { METRICS_SYNC } from '../contracts/metricsSync';
import { startPriority } from './priority';

// The starter of the one metrics-sync workflow of a deployment (docs/analytics.md "Sync").

/** Starts the metrics-sync workflow unless it is already running; true when this call started it. */
export async function ensureMetricsSync(
  client: Client,
  opts: { intervalSeconds?: number; batch?: number; workflowId?: string; taskQueue?: string } = {},
): Promise<boolean> {
  try {
    await client.workflow.start<typeof metricsSyncWorkflow>(METRICS_SYNC.type, {
      taskQueue: opts.taskQueue ?? config.temporalTaskQueue,
      workflowId: opts.workflowId ?? METRICS_SYNC.id(),
      args: [
        { intervalSeconds: opts.intervalSeconds ?? config.analytics.syncIntervalSeconds, batch: opts.batch ?? config.analytics.syncBatch },
      ],
      ...startPriority('metricsSync', null),
      staticSummary: 'Syncs metrics of published posts from the network on a decaying cadence',
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
