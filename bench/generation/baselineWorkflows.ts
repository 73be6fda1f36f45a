import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

// The generation bench's baseline workflows (baseline.ts): the least Temporal does for one job,
// and the service's workflow shape (workflows/generatePost.ts) replaying its steps' statements.

export interface BareJobActivities {
  completeBareJob(id: string): Promise<void>;
}

export interface SameStatementsActivities {
  /** Replays the captured statements of the service's activity `type` for job `id`. */
  replayStep(args: { type: string; id: string }): Promise<void>;
}

const { completeBareJob } = proxyActivities<BareJobActivities>({ startToCloseTimeout: '1 minute' });

/** One activity that sets the job row's completed_at, then done. */
export async function bareJobWorkflow(id: string): Promise<void> {
  await completeBareJob(id);
}

const local = proxyLocalActivities<SameStatementsActivities>({ startToCloseTimeout: '10 seconds' });
const queued = proxyActivities<SameStatementsActivities>({ startToCloseTimeout: '1 minute' });

/** The service's steps in its order: `steps[i].local` says whether step i runs as a local activity. */
export async function sameStatementsJobWorkflow(id: string, steps: Array<{ type: string; local: boolean }>): Promise<void> {
  for (const s of steps) await (s.local ? local : queued).replayStep({ type: s.type, id });
}
