import { proxyActivities } from '@temporalio/workflow';

// The generation bench's bare baseline (bench/generation/baseline.ts): the least Temporal does
// for one queued job, namely one workflow whose only step is one activity doing one UPDATE.

export interface BareJobActivities {
  completeBareJob(id: string): Promise<void>;
}

const { completeBareJob } = proxyActivities<BareJobActivities>({ startToCloseTimeout: '1 minute' });

/** One activity that sets the job row's completed_at, then done. */
export async function bareJobWorkflow(id: string): Promise<void> {
  await completeBareJob(id);
}
