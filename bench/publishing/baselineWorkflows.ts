import { proxyActivities, sleep } from '@temporalio/workflow';

// The publishing bench's bare baselines (baseline.ts): the least Temporal does for a post that falls due.

const { touchBaselineRow } = proxyActivities<{ touchBaselineRow(id: string): Promise<void> }>({ startToCloseTimeout: '1 minute' });

/** One durable timer to the due instant, then done. */
export async function bareTimerWorkflow(input: { dueMs: number }): Promise<void> {
  const wait = input.dueMs - Date.now();
  if (wait > 0) await sleep(wait);
}

/** One durable timer to the due instant, then one activity that does one UPDATE. */
export async function timerActivityWorkflow(input: { dueMs: number; id: string }): Promise<void> {
  const wait = input.dueMs - Date.now();
  if (wait > 0) await sleep(wait);
  await touchBaselineRow(input.id);
}
