import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { config } from '../config';
import { connectionHealthWorkflow } from '../../workflows/connectionHealth';
import { publishPostWorkflow, scheduleChangedSignal } from '../../workflows/publishPost';
import { SEARCH, workflowIds } from '../temporal';
import { hasScheduleColumns, scheduleSnapshot, type ScheduleRow } from './schedule';

// Client-side of the publish and health workflows, shared by the API and the reconciler. The
// workflow, signal and argument types come from the workflow files themselves.

/**
 * Tells the post's one publish workflow that its schedule changed, starting it if needed
 * (signal-with-start: never a second workflow), then records the version it now knows about.
 * A row with its schedule columns travels as a snapshot in the start input and the signal, so
 * the workflow arms its timer without reading the row (workflows/publishPost.ts).
 */
export async function syncPublishWorkflow(
  client: Client,
  db: Knex,
  post: { id: string; workspace_id: string; project_id: string | null; schedule_version: number } & Partial<ScheduleRow>,
): Promise<void> {
  const schedule = hasScheduleColumns(post) ? scheduleSnapshot(post) : undefined;
  await client.workflow.signalWithStart(publishPostWorkflow, {
    taskQueue: config.temporalTaskQueue,
    workflowId: workflowIds.publish(post.id),
    args: [schedule === undefined ? { postId: post.id } : { postId: post.id, schedule }],
    signal: scheduleChangedSignal,
    signalArgs: schedule === undefined ? [post.schedule_version] : [post.schedule_version, { schedule }],
    typedSearchAttributes: [
      { key: SEARCH.workspace, value: post.workspace_id },
      { key: SEARCH.project, value: post.project_id ?? '' },
      { key: SEARCH.post, value: post.id },
    ],
    staticSummary: `Publish post ${post.id}`,
    staticDetails: `Workspace ${post.workspace_id}, project ${post.project_id}. Waits for the scheduled time plus the publish delay, then publishes once.`,
  });
  await db('posts')
    .where({ id: post.id })
    .andWhere('workflow_synced_version', '<', post.schedule_version)
    .update({ workflow_synced_version: post.schedule_version });
}

/** Starts the project's long-lived health workflow unless it already runs. */
export async function ensureHealthWorkflow(client: Client, project: { id: string; workspace_id: string }): Promise<boolean> {
  try {
    await client.workflow.start(connectionHealthWorkflow, {
      taskQueue: config.temporalTaskQueue,
      workflowId: workflowIds.connectionHealth(project.id),
      args: [{ projectId: project.id }],
      typedSearchAttributes: [
        { key: SEARCH.workspace, value: project.workspace_id },
        { key: SEARCH.project, value: project.id },
      ],
      staticSummary: `Connection health of project ${project.id}`,
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
