import { defineQuery } from '@temporalio/workflow';
import type { WorkflowName } from './workflowName';

// The contract of the engagement workflow (workflows/engagePost.ts, docs/engagement.md), started
// only as a child of the publish workflow.

export const ENGAGE_POST = {
  type: 'engagePostWorkflow' satisfies WorkflowName,
  /** docs/engagement.md: the engagement after a post's publish (a child of publish-<postId>). */
  id: (postId: string) => `engage-${postId}`,
} as const;

export interface EngagementStatus {
  planned: number;
  done: number;
  skipped: number;
  failed: number;
}
export const engagementStatusQuery = defineQuery<EngagementStatus>('status');
