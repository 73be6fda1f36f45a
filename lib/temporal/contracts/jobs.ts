import { defineQuery } from '@temporalio/workflow';
import type { JobProgress } from '../../jobs/row';

// The contract every job workflow shares (workflows/jobSteps.ts; spec 2.12 / 3.2): started by
// lib/temporal/start/jobs.ts under the job's id, with the job's ids as input, answering a
// `progress` query, so progress queries and cancel reach any job type the same way. Which
// workflow runs which job type is the kind's declaration (lib/jobs/kinds/).

/** ARCHITECTURE.md: one workflow per job, id = job id, so the API id finds it in the UI. */
export const jobWorkflowId = (jobId: string) => jobId;

export interface JobWorkflowInput {
  jobId: string;
  workspaceId: string;
  projectId: string;
}

export const jobProgressQuery = defineQuery<JobProgress>('progress');
