import { WorkflowNotFoundError } from '@temporalio/client';
import { config } from '../../config';
import type { JobIds } from '../../jobs/kind';
import type { JobProgress } from '../../jobs/row';
import { log } from '../../logger';
import { SEARCH } from '../../searchAttributes';
import { temporalClient } from '../client';
import { jobProgressQuery, jobWorkflowId, type JobWorkflowInput } from '../contracts/jobs';
import { jobsQueue } from '../contracts/queues';
import type { WorkKind } from '../contracts/priority';
import type { WorkflowName } from '../contracts/workflowName';
import { startPriority } from './priority';

// The one starter of every job workflow (lib/temporal/contracts/jobs.ts): the start under the
// job's id, the progress query and the cancel. Which workflow a job type runs, and what its
// start shows, is the kind's declaration (lib/jobs/kinds/); lib/jobs/queue.ts startWorkflowOfJob
// passes them here.

/** Starts a job's workflow under the job's id, so progress queries and cancel reach any job type the same way. */
export async function startJobWorkflow(
  workflowType: WorkflowName,
  job: JobIds,
  text: { kind: WorkKind; summary: string; details?: string },
): Promise<void> {
  const client = await temporalClient();
  // Bounded so an unreachable Temporal turns into a prompt 503 rather than a hung request; a
  // start that did land after the deadline finds its job withdrawn and ends at once.
  await client.withDeadline(Date.now() + 10_000, () =>
    client.workflow.start<(input: JobWorkflowInput) => Promise<unknown>>(workflowType, {
      // The jobs queue (lib/temporal/contracts/queues.ts): its own slots, fairly shared.
      taskQueue: jobsQueue(config.temporalTaskQueue),
      workflowId: jobWorkflowId(job.id),
      // The job id is fresh, so a duplicate can only be this same request's retry.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [{ jobId: job.id, workspaceId: job.workspace_id, projectId: job.project_id ?? '' }],
      typedSearchAttributes: [
        { key: SEARCH.workspace, value: job.workspace_id },
        ...(job.project_id !== null ? [{ key: SEARCH.project, value: job.project_id }] : []),
        { key: SEARCH.job, value: job.id },
      ],
      ...startPriority(text.kind, job.workspace_id),
      staticSummary: text.summary,
      ...(text.details !== undefined ? { staticDetails: text.details } : {}),
    }),
  );
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
      client.workflow.getHandle(jobWorkflowId(jobId)).query(jobProgressQuery),
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
export async function cancelJobWorkflow(jobId: string): Promise<void> {
  try {
    const client = await temporalClient();
    // The cancel has already happened (the row); this must not hold the answer up for long.
    await client.withDeadline(Date.now() + 2_000, () => client.workflow.getHandle(jobWorkflowId(jobId)).cancel());
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    log.warn('could not cancel the job workflow; it will see the cancelled row and stop', { jobId, err });
  }
}
