import type { Client } from '@temporalio/client';
import type { publishPostWorkflow } from '../../../workflows/publishPost';
import { config } from '../../config';
import { fireTimeMs, hasScheduleColumns, scheduleSnapshot, type ScheduleRow, type ScheduleSnapshot } from '../../publishing/schedule';
import { publishTurnMs } from '../../publishing/turns';
import { SEARCH } from '../../searchAttributes';
import { PUBLISH_POST, scheduleChangedSignal, type CarriedSchedule } from '../contracts/publishPost';
import { startPriority } from './priority';

// The starter of the publish workflow (lib/temporal/contracts/publishPost.ts), for the API and
// the reconciler: its one signal-with-start, id and search attributes.

/**
 * Tells the post's one publish workflow that its schedule changed, starting it if needed
 * (signal-with-start: never a second workflow). Recording the version it now knows is the
 * caller's (lib/posts/afterCommit.ts syncPostSchedule).
 * A row with its schedule columns travels as a snapshot in the start input and the signal, so
 * the workflow arms its timer without reading the row (workflows/publishPost.ts).
 *
 * A new workflow for a post due later is started with a start delay to its fire time
 * (docs/publishing.md "The publish workflow"): the server holds it, durably, without any workflow
 * task, and its first task runs at the fire time and publishes at once. That is one workflow task
 * per post instead of two, no waiting workflow in any worker's cache, and a wake-up the server
 * times from the fire time itself (a timer armed inside a workflow task starts when that task
 * completes, so it fires late by the task's run time). A signal-with-start to a workflow still
 * in its delay (a move earlier: lib/publishing/schedule.ts wakesWorkflow) makes the server run
 * its first task at once (Temporal skips the rest of the delay), and the workflow arms a timer
 * from the snapshot as before.
 */
export async function syncPublishWorkflow(
  client: Client,
  post: {
    id: string;
    workspace_id: string;
    project_id: string | null;
    schedule_version: number;
    publish_turn_ms?: number;
  } & Partial<ScheduleRow>,
): Promise<void> {
  const snapshot = hasScheduleColumns(post) ? scheduleSnapshot(post) : undefined;
  const fireAtMs = snapshot ? fireTimeMs(snapshot) : null;
  // A post still to fire takes its turn within its workspace's posts of that instant.
  const schedule =
    snapshot && fireAtMs !== null && fireAtMs > Date.now() && post.scheduled_at
      ? {
          ...snapshot,
          turnMs:
            post.publish_turn_ms ??
            (await publishTurnMs({ id: post.id, workspace_id: post.workspace_id, scheduled_at: post.scheduled_at })),
        }
      : snapshot;
  const startDelayMs = publishStartDelayMs(schedule);
  await client.workflow.signalWithStart<typeof publishPostWorkflow, [number, CarriedSchedule?]>(PUBLISH_POST.type, {
    taskQueue: config.temporalTaskQueue,
    ...(startDelayMs > 0 ? { startDelay: startDelayMs } : {}),
    workflowId: PUBLISH_POST.id(post.id),
    args: [schedule === undefined ? { postId: post.id } : { postId: post.id, schedule }],
    signal: scheduleChangedSignal,
    signalArgs: schedule === undefined ? [post.schedule_version] : [post.schedule_version, { schedule }],
    typedSearchAttributes: [
      { key: SEARCH.workspace, value: post.workspace_id },
      { key: SEARCH.project, value: post.project_id ?? '' },
      { key: SEARCH.post, value: post.id },
    ],
    ...startPriority('publish', post.workspace_id),
    staticSummary: `Publish post ${post.id}`,
    staticDetails: `Workspace ${post.workspace_id}, project ${post.project_id}. Waits for the scheduled time plus the publish delay, then publishes once.`,
  });
}

/**
 * How long a new publish workflow is held before its first task: until the fire time (scheduled
 * time + publish delay) plus the post's turn (lib/publishing/turns.ts), rounded up to the
 * millisecond so that the task, stamped by the server's clock when it starts, never sees a time
 * before it. 0 (start at once) when the snapshot is missing, not scheduled, or already due.
 */
export function publishStartDelayMs(schedule: ScheduleSnapshot | null | undefined, nowMs = Date.now()): number {
  const fireAtMs = schedule ? fireTimeMs(schedule) : null;
  if (fireAtMs === null) return 0;
  return Math.max(0, Math.ceil(fireAtMs + (schedule!.turnMs ?? 0) - nowMs));
}
