import { GENERATE_POST } from '../contracts/jobs';
import { startJobWorkflow, type JobRef } from './jobs';

// The starter of the post generation workflow (workflows/generatePost.ts, spec 2.12 / 3.2).

export async function startGenerationWorkflow(job: JobRef & { project_id: string }): Promise<void> {
  await startJobWorkflow(GENERATE_POST.type, job, {
    kind: 'generation',
    summary: `Generate a draft post for project ${job.project_id}`,
    details: `Job ${job.id} of workspace ${job.workspace_id}. QUEUED → RUNNING → DONE writes one draft (never scheduled); the job row in Postgres is the API's view.`,
  });
}
