import { generateImageWorkflow } from '../../workflows/generateImage';
import { startJobWorkflow } from '../generation/workflowClient';

// The API's side of the image generation workflow (as lib/generation/workflowClient.ts for post
// generation): id = job id, so progress queries and cancel reach it the same way.

export async function startImageWorkflow(job: { id: string; workspace_id: string; project_id: string }): Promise<void> {
  await startJobWorkflow(generateImageWorkflow, job, { summary: `Generate an image for project ${job.project_id}` });
}
