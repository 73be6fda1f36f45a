import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { maintenanceWorkflow } from '../../../workflows/maintenance';
import { config } from '../../config';
import { MAINTENANCE } from '../contracts/maintenance';
import { startPriority } from './priority';

// The starter of the reconciler (lib/temporal/contracts/maintenance.ts): one per deployment;
// every worker asks for it at start, and the first start wins.

/** Starts the reconciler unless it already runs; true when this call started it. */
export async function ensureMaintenanceWorkflow(client: Client): Promise<boolean> {
  try {
    await client.workflow.start<typeof maintenanceWorkflow>(MAINTENANCE.type, {
      taskQueue: config.temporalTaskQueue,
      workflowId: MAINTENANCE.id(),
      args: [{ intervalSeconds: config.worker.reconcileIntervalSeconds }],
      ...startPriority('maintenance', null),
      staticSummary: 'Reconciles schedule changes with publish workflows; starts connection health checks',
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
