import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ScheduleSnapshot } from '../../publishing/schedule';
import type { WorkflowName } from './workflowName';

// The contract of the publish workflow (workflows/publishPost.ts, docs/publishing.md): what both
// the workflow and its starter (lib/temporal/start/publishPost.ts) name.

export const PUBLISH_POST = {
  type: 'publishPostWorkflow' satisfies WorkflowName,
  /** One per post, from its API id, so an operator finds a post's workflow by it. */
  id: (postId: string) => `publish-${postId}`,
} as const;

export interface PublishInput {
  postId: string;
  /** The schedule as committed when the workflow was started; absent: read the row. */
  schedule?: ScheduleSnapshot | null;
}

/** The second signal argument: the schedule as committed (null: the post is gone). */
export interface CarriedSchedule {
  schedule: ScheduleSnapshot | null;
}
export const scheduleChangedSignal = defineSignal<[number, CarriedSchedule?]>('scheduleChanged');

export interface PublishStatus {
  state: 'waiting' | 'publishing' | 'retrying' | 'done';
  version: number | null;
  fireAtMs: number | null;
  attempts: number;
  lastError: string | null;
}
export const publishStatusQuery = defineQuery<PublishStatus>('status');

export type PublishResult = { outcome: 'published'; postUrn: string } | { outcome: 'not_scheduled' } | { outcome: 'failed'; error: string };
