import { generateImageWorkflow } from '../../workflows/generateImage';
import { config } from '../config';
import { SEARCH, temporalClient, workflowIds } from '../temporal';

// The API's side of the image generation workflow (as lib/generation/workflowClient.ts for post
// generation): id = job id, so progress queries and cancel reach it the same way.

export async function startImageWorkflow(job: { id: string; workspace_id: string; project_id: string }): Promise<void> {
  const client = await temporalClient();
  // Bounded so an unreachable Temporal turns into a prompt 503 rather than a hung request.
  await client.withDeadline(Date.now() + 10_000, () =>
    client.workflow.start(generateImageWorkflow, {
      taskQueue: config.temporalTaskQueue,
      workflowId: workflowIds.generation(job.id),
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [{ jobId: job.id, workspaceId: job.workspace_id, projectId: job.project_id }],
      typedSearchAttributes: [
        { key: SEARCH.workspace, value: job.workspace_id },
        { key: SEARCH.project, value: job.project_id },
        { key: SEARCH.job, value: job.id },
      ],
      staticSummary: `Generate an image for project ${job.project_id}`,
    }),
  );
}
