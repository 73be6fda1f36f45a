import type { WorkflowName } from './workflowName';

// The contract of the upload expiry sweep (workflows/sweepUploads.ts, docs/media.md), run by a
// Temporal Schedule that lib/temporal/start/sweepUploads.ts creates: the schedule's id and the
// id of each run it starts.

export const SWEEP_UPLOADS = {
  type: 'sweepUploadsWorkflow' satisfies WorkflowName,
  scheduleId: 'upload-sweep',
  id: () => 'upload-sweep-run',
} as const;
