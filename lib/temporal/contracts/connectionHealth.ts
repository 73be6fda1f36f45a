import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { WorkflowName } from './workflowName';

// The contract of the connection health workflow (workflows/connectionHealth.ts): one long-lived
// workflow per project, started by lib/temporal/start/connectionHealth.ts.

export const CONNECTION_HEALTH = {
  type: 'connectionHealthWorkflow' satisfies WorkflowName,
  id: (projectId: string) => `connection-health-${projectId}`,
} as const;

export interface ConnectionHealthInput {
  projectId: string;
}

/** Check at once. `requestId` (optional) comes back in `lastCheck` once a check made for it is done. */
export const checkNowSignal = defineSignal<[requestId?: string]>('checkNow');

/** The outcome of the latest check of this run (null before the first); `bin/admin connection check` reads it. */
export interface LastCheck {
  checkedAt: string;
  ok: boolean | null;
  failures: number;
  requestId: string | null;
}
export const lastCheckQuery = defineQuery<LastCheck | null>('lastCheck');

/** What this run has seen: checks made, the last result and the streak the row reported. */
export interface HealthStatus {
  checks: number;
  lastOk: boolean | null;
  failures: number;
  nextCheckAtMs: number | null;
}
export const healthStatusQuery = defineQuery<HealthStatus>('healthStatus');
