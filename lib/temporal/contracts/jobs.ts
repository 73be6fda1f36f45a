import { defineQuery } from '@temporalio/workflow';
import type { JobProgress } from '../../generation/jobs';
import type { WorkflowName } from './workflowName';

// The contract every job workflow shares (workflows/jobSteps.ts; spec 2.12 / 3.2): started by
// lib/temporal/start/jobs.ts under the job's id, with the job's ids as input, answering a
// `progress` query, so progress queries and cancel reach any job type the same way.

/** ARCHITECTURE.md: one workflow per job, id = job id, so the API id finds it in the UI. */
export const jobWorkflowId = (jobId: string) => jobId;

export const GENERATE_POST = { type: 'generatePostWorkflow' satisfies WorkflowName } as const;
export const GENERATE_IMAGE = { type: 'generateImageWorkflow' satisfies WorkflowName } as const;
export const INGEST_SOURCE = { type: 'ingestSourceWorkflow' satisfies WorkflowName } as const;
export const INGEST_KNOWLEDGE = { type: 'ingestKnowledgeWorkflow' satisfies WorkflowName } as const;

/** The job workflows' type names: lib/temporal/start/jobs.ts starts only these. */
export type JobWorkflowName = (typeof GENERATE_POST | typeof GENERATE_IMAGE | typeof INGEST_SOURCE | typeof INGEST_KNOWLEDGE)['type'];

export interface JobWorkflowInput {
  jobId: string;
  workspaceId: string;
  projectId: string;
}

export const jobProgressQuery = defineQuery<JobProgress>('progress');
