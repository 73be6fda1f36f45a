import assert from 'node:assert/strict';
import { checkNowSignal, connectionHealthWorkflow, healthStatusQuery, type HealthStatus } from '../../workflows/connectionHealth';
import { maybeRecordTierHistory } from '../support/histories';
import { waitFor } from '../support/wait';
import { withWorker } from '../support/workflowEnv';

// The health workflow alone (workflows/connectionHealth.ts, spec 2.6 / 3.4): the streak lives in
// the connection row (the check activity's answer); the workflow keeps checking through a
// failure streak, wakes on checkNow and ends when the project is gone.

type Check = { exists: boolean; ok: boolean | null; failures: number | null; intervalSeconds: number };

describe('connection health workflow (workflow tier: stubbed check, own task queue)', function () {
  this.timeout(60_000);

  it('reports the streak through its query, checks on demand and ends when the project is gone', async () => {
    // An hour between checks: every check below is one the signal asked for.
    const answers: Check[] = [
      { exists: true, ok: true, failures: 0, intervalSeconds: 3600 },
      { exists: true, ok: false, failures: 1, intervalSeconds: 3600 },
      { exists: true, ok: false, failures: 2, intervalSeconds: 3600 },
      // A timed-out check moves nothing (docs/publishing.md): the status keeps the last count.
      { exists: true, ok: false, failures: null, intervalSeconds: 3600 },
      { exists: true, ok: false, failures: 3, intervalSeconds: 3600 },
      { exists: false, ok: null, failures: 0, intervalSeconds: 3600 },
    ];
    let calls = 0;
    const activities = {
      async checkConnection(): Promise<Check> {
        return answers[Math.min(calls++, answers.length - 1)]!;
      },
    };
    await withWorker(activities, async (ctx) => {
      const handle = await ctx.client.workflow.start(connectionHealthWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `connection-health-${ctx.taskQueue}`,
        args: [{ projectId: 'proj_1' }],
      });
      const after = (checks: number) =>
        waitFor(
          async () => {
            const s = await handle.query(healthStatusQuery);
            return s.checks === checks && s.nextCheckAtMs !== null && s;
          },
          20_000,
          `check ${checks}`,
          50,
        );
      const first: HealthStatus = await after(1);
      assert.deepEqual([first.lastOk, first.failures], [true, 0]);
      assert.ok(first.nextCheckAtMs! - Date.now() > 3_000_000, 'the next check is an interval away');
      const expected = [1, 2, 2, 3];
      for (const [i, failures] of expected.entries()) {
        await handle.signal(checkNowSignal);
        const s = await after(2 + i);
        assert.deepEqual([s.lastOk, s.failures], [false, failures], 'the streak the row reports');
      }
      await handle.signal(checkNowSignal);
      await handle.result();
      const last = await handle.query(healthStatusQuery);
      assert.deepEqual([last.checks, last.nextCheckAtMs], [6, null]);
      assert.equal(calls, 6, 'one check per wake-up, none in between');
      await maybeRecordTierHistory(ctx, handle.workflowId, 'connectionHealth-streak-project-gone');
    });
  });
});
