import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

// The generation bench's bare baselines' workflow (baseline.ts): a plan's steps (plan.ts) in
// order, each an activity replaying that step's statements; the minimal plan's one step is the
// least Temporal does for a job, the same-statements plan's the service's (workflows/generatePost.ts).

export interface BareJobActivities {
  /** Replays the statements of the plan's step `type` for job `id`. */
  replayStep(args: { type: string; id: string }): Promise<void>;
}

const local = proxyLocalActivities<BareJobActivities>({ startToCloseTimeout: '10 seconds' });
const queued = proxyActivities<BareJobActivities>({ startToCloseTimeout: '1 minute' });

/** `steps[i].local` says whether step i runs as a local activity. */
export async function bareJobWorkflow(id: string, steps: Array<{ type: string; local: boolean }>): Promise<void> {
  for (const s of steps) await (s.local ? local : queued).replayStep({ type: s.type, id });
}
