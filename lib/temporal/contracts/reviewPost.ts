import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { WorkflowName } from './workflowName';

// The contract of the review workflow (workflows/reviewPost.ts, docs/review.md).

export const REVIEW_POST = {
  type: 'reviewPostWorkflow' satisfies WorkflowName,
  /** docs/review.md: one workflow per review round of a post. */
  id: (postId: string, round: number) => `review-${postId}-${round}`,
} as const;

export interface ReviewInput {
  postId: string;
  round: number;
  deadlineMs: number | null;
}

export const reviewDecidedSignal = defineSignal<[round: number]>('reviewDecided');

export interface ReviewStatus {
  round: number;
  state: 'waiting' | 'overdue' | 'closed';
  deadlineMs: number | null;
}
export const reviewStatusQuery = defineQuery<ReviewStatus>('status');
