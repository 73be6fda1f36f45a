import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

// The generation bench's baselines (bench/generation/baseline.ts). The minimal one: the least
// Temporal does for one queued job, namely one workflow whose only step is one activity doing
// one UPDATE. The same-statements one: the service's workflow shape (workflows/generatePost.ts:
// a local activity starting the job, the writer's activity, a local activity completing it),
// each step replaying the statements the service's step ran (sameStatements.ts).

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
