import type { WorkflowName } from './workflowName';

// The contract of the reconciler (workflows/maintenance.ts): one per deployment, started by every
// worker at start (lib/temporal/start/maintenance.ts); the first start wins.

export const MAINTENANCE = {
  type: 'maintenanceWorkflow' satisfies WorkflowName,
  id: () => 'maintenance-reconciler',
} as const;

export interface MaintenanceInput {
  intervalSeconds: number;
}
