import { WorkflowNotFoundError } from '@temporalio/client';
import { generatePostWorkflow, jobProgressQuery } from '../../workflows/generatePost';
import type { JobWorkflowInput } from '../../workflows/jobSteps';
import { config } from '../config';
import { log } from '../logger';
import { SEARCH, temporalClient, workflowIds } from '../temporal';
import type { JobProgress } from './jobs';

// The API's side of the generation workflow: start it, ask it for progress, ask it to stop.

/** A job's ids; a workspace-wide job (a WORKSPACE knowledge document) has no project. */
type JobRef = { id: string; workspace_id: string; project_id: string | null };

/** Starts a job's workflow under the job's id, so progress queries and cancel reach any job type the same way. */
export async function startJobWorkflow(
  workflow: (input: JobWorkflowInput) => Promise<unknown>,
  job: JobRef,
  text: { summary: string; details?: string },
): Promise<void> {
  const client = await temporalClient();
  // Bounded so an unreachable Temporal turns into a prompt 503 rather than a hung request; a
  // start that did land after the deadline finds its job withdrawn and ends at once.
  await client.withDeadline(Date.now() + 10_000, () =>
    client.workflow.start(workflow, {
      taskQueue: config.temporalTaskQueue,
      workflowId: workflowIds.generation(job.id),
      // The job id is fresh, so a duplicate can only be this same request's retry.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [{ jobId: job.id, workspaceId: job.workspace_id, projectId: job.project_id ?? '' }],
      typedSearchAttributes: [
        { key: SEARCH.workspace, value: job.workspace_id },
        ...(job.project_id !== null ? [{ key: SEARCH.project, value: job.project_id }] : []),
        { key: SEARCH.job, value: job.id },
      ],
      staticSummary: text.summary,
      ...(text.details !== undefined ? { staticDetails: text.details } : {}),
    }),
  );
}

export async function startGenerationWorkflow(job: JobRef & { project_id: string }): Promise<void> {
  await startJobWorkflow(generatePostWorkflow, job, {
    summary: `Generate a draft post for project ${job.project_id}`,
    details: `Job ${job.id} of workspace ${job.workspace_id}. QUEUED → RUNNING → DONE writes one draft (never scheduled); the job row in Postgres is the API's view.`,
  });
}

function isProgress(v: unknown): v is JobProgress {
  const p = v as JobProgress | null;
  return !!p && typeof p.progress === 'number' && typeof p.updatedAt === 'string' && typeof p.message === 'string';
}

/**
 * The running workflow's own progress answer, or null when it cannot answer quickly (no worker
 * polling, Temporal unreachable): callers fall back to the job row.
 */
export async function queryJobProgress(jobId: string): Promise<JobProgress | null> {
  try {
    const client = await temporalClient();
    const answer = await client.withDeadline(Date.now() + config.generation.progressQueryTimeoutMs, () =>
      client.workflow.getHandle(workflowIds.generation(jobId)).query(jobProgressQuery),
    );
    return isProgress(answer) ? answer : null;
  } catch {
    return null;
  }
}

/**
 * After the row says CANCELLED, closes the workflow too so the Temporal UI agrees with the API.
 * Best effort: a workflow that misses this finds the row CANCELLED at its first step and ends.
 */
export async function cancelGenerationWorkflow(jobId: string): Promise<void> {
  try {
    const client = await temporalClient();
    // The cancel has already happened (the row); this must not hold the answer up for long.
    await client.withDeadline(Date.now() + 2_000, () => client.workflow.getHandle(workflowIds.generation(jobId)).cancel());
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    log.warn('could not cancel the generation workflow; it will see the cancelled row and stop', { jobId, err });
  }
}
