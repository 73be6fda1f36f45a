import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { PublishingActivities } from '../activities/publishing';
import {
  checkNowSignal,
  healthStatusQuery,
  lastCheckQuery,
  type ConnectionHealthInput,
  type HealthStatus,
  type LastCheck,
} from '../lib/temporal/contracts/connectionHealth';

// One long-lived workflow per project (id `connection-health-<projectId>`): validates the
// connection on an interval. The failure streak lives in the connection row (spec 3.4: three
// consecutive failures revoke), so every door that talks to the network counts into one streak.

const { checkConnection } = proxyActivities<PublishingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
});

// The signal, the queries and their types are the workflow's contract, shared with its starter
// (lib/temporal/start/connectionHealth.ts) and `bin/admin connection check`.
export {
  checkNowSignal,
  healthStatusQuery,
  lastCheckQuery,
  type HealthStatus,
  type LastCheck,
} from '../lib/temporal/contracts/connectionHealth';

export async function connectionHealthWorkflow(input: ConnectionHealthInput): Promise<void> {
  let wake = false;
  const status: HealthStatus = { checks: 0, lastOk: null, failures: 0, nextCheckAtMs: null };
  // Handlers and queries add no commands to the history, so recorded histories replay unchanged.
  let last: LastCheck | null = null;
  let requested: string | null = null;
  setHandler(checkNowSignal, (requestId) => {
    wake = true;
    if (requestId) requested = requestId;
  });
  setHandler(healthStatusQuery, () => status);
  setHandler(lastCheckQuery, () => last);
  for (;;) {
    wake = false;
    status.nextCheckAtMs = null;
    // A request that arrives while this check runs is answered by the next one, made after it.
    const forRequest = requested;
    requested = null;
    const r = await checkConnection(input.projectId);
    status.checks++;
    status.lastOk = r.ok;
    // null: this check moved nothing in the streak (a timeout, docs/publishing.md); keep the last count.
    if (r.failures !== null) status.failures = r.failures;
    last = { checkedAt: new Date().toISOString(), ok: r.ok, failures: status.failures, requestId: forRequest };
    if (!r.exists) return;
    status.nextCheckAtMs = Date.now() + r.intervalSeconds * 1000;
    await condition(() => wake, r.intervalSeconds * 1000, {
      summary: `Next connection check in ${r.intervalSeconds} s (or at once on request)`,
    });
    // Keep histories short: a new run well before the event limit.
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 1_000)
      await continueAsNew<typeof connectionHealthWorkflow>(input);
  }
}
