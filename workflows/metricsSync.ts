import { continueAsNew, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { AnalyticsActivities } from '../activities/analytics';
import type { MetricsSyncInput } from '../lib/temporal/contracts/metricsSync';
import { workPriority } from '../lib/temporal/contracts/priority';

// The metrics sync (id `metrics-sync`, one per deployment; docs/analytics.md): passes over the
// posts whose next sample is due, back to back while full batches come back, then sleeps. The
// decaying cadence lives in each post's next_sync_at, so this loop only decides how often to
// look. A new run well before the history limit keeps histories short.

const { syncPostMetrics } = proxyActivities<AnalyticsActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
  // Every workspace's posts: background, on the deployment's fairness key (lib/temporal/contracts/priority.ts).
  priority: workPriority('metricsSync', null),
});

export async function metricsSyncWorkflow(input: MetricsSyncInput): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await syncPostMetrics({ batch: input.batch });
    const full = input.batch !== undefined ? r.claimed >= input.batch : r.claimed >= 500;
    if (!full) await sleep(input.intervalSeconds * 1000, { summary: `Metrics sync interval (${input.intervalSeconds} s)` });
    if (workflowInfo().continueAsNewSuggested) break;
  }
  await continueAsNew<typeof metricsSyncWorkflow>(input);
}
