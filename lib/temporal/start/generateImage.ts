import { GENERATE_IMAGE } from '../contracts/jobs';
import { startJobWorkflow, type JobRef } from './jobs';

// The starter of the image generation workflow (workflows/generateImage.ts, docs/media.md "Image
// generation"): id = job id, so progress queries and cancel reach it as any job's.

export async function startImageWorkflow(job: JobRef & { project_id: string }): Promise<void> {
  await startJobWorkflow(GENERATE_IMAGE.type, job, { kind: 'image', summary: `Generate an image for project ${job.project_id}` });
}
