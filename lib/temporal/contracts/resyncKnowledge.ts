import type { WorkflowName } from './workflowName';

// The contract of the URL knowledge re-sync (workflows/resyncKnowledge.ts, docs/knowledge.md),
// run by a Temporal Schedule that lib/temporal/start/resyncKnowledge.ts creates: the schedule's
// id and the id of each run it starts.

export const RESYNC_KNOWLEDGE = {
  type: 'resyncKnowledgeWorkflow' satisfies WorkflowName,
  scheduleId: 'knowledge-resync',
  id: () => 'knowledge-resync-run',
} as const;

export interface ResyncInput {
  /** Documents synced more recently than this are skipped. */
  olderThanSeconds: number;
}
