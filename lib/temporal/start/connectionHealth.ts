import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import type { connectionHealthWorkflow } from '../../../workflows/connectionHealth';
import { config } from '../../config';
import { SEARCH } from '../../searchAttributes';
import { checkNowSignal, CONNECTION_HEALTH } from '../contracts/connectionHealth';
import { startPriority } from './priority';

// The starter of a project's connection health workflow (lib/temporal/contracts/connectionHealth.ts):
// the reconciler's start and the operator's check-now signal-with-start share one set of options.

type Project = { id: string; workspace_id: string };

function healthStartOptions(project: Project): WorkflowStartOptions<typeof connectionHealthWorkflow> {
  return {
    taskQueue: config.temporalTaskQueue,
    workflowId: CONNECTION_HEALTH.id(project.id),
    args: [{ projectId: project.id }],
    typedSearchAttributes: [
      { key: SEARCH.workspace, value: project.workspace_id },
      { key: SEARCH.project, value: project.id },
    ],
    ...startPriority('connectionHealth', project.workspace_id),
    staticSummary: `Connection health of project ${project.id}`,
  };
}

/** Starts the project's long-lived health workflow unless it already runs. */
export async function ensureHealthWorkflow(client: Client, project: Project): Promise<boolean> {
  try {
    await client.workflow.start<typeof connectionHealthWorkflow>(CONNECTION_HEALTH.type, healthStartOptions(project));
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/**
 * Asks the project's health workflow to check now (starting it when it does not run); the check
 * made for `requestId` reports it in the workflow's `lastCheck` query. Answers the workflow id.
 */
export async function requestHealthCheck(client: Client, project: Project, requestId: string): Promise<string> {
  const options = healthStartOptions(project);
  await client.workflow.signalWithStart<typeof connectionHealthWorkflow, [requestId?: string]>(CONNECTION_HEALTH.type, {
    ...options,
    signal: checkNowSignal,
    signalArgs: [requestId],
  });
  return options.workflowId;
}
