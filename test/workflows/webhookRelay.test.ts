import assert from 'node:assert/strict';
import { Context } from '@temporalio/activity';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { webhookRelayWorkflow } from '../../workflows/webhookRelay';
import { waitFor } from '../support/wait';
import { withWorker } from '../support/workflowEnv';

// The outbox relay (workflows/webhookRelay.ts): cancelling it waits until the running batch
// has finished (WAIT_CANCELLATION_COMPLETED), so no claimed batch is cut off halfway.
describe('webhook outbox relay workflow (workflow tier: stubbed relay, own task queue)', function () {
  this.timeout(60_000);

  it('a cancel lets the running batch finish before the relay closes', async () => {
    const runs: Array<{ startedAt: number; finishedAt?: number; maxRunMs: number }> = [];
    const activities = {
      async relayOutbox(input: { maxRunMs: number }): Promise<void> {
        const run: { startedAt: number; finishedAt?: number; maxRunMs: number } = { startedAt: Date.now(), maxRunMs: input.maxRunMs };
        runs.push(run);
        const ctx = Context.current();
        // Poll and heartbeat like the real relay until asked to stop, then finish the batch.
        while (!ctx.cancellationSignal.aborted) {
          ctx.heartbeat();
          await ctx.sleep(100).catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, 700));
        run.finishedAt = Date.now();
      },
    };
    await withWorker(
      activities,
      async (ctx) => {
        const handle = await ctx.client.workflow.start(webhookRelayWorkflow, {
          taskQueue: ctx.taskQueue,
          workflowId: `relay-${ctx.taskQueue}`,
          args: [{ runMs: 5_000 }],
        });
        await waitFor(async () => runs.length === 1, 20_000, 'the relay activity', 50);
        assert.equal(runs[0]!.maxRunMs, 5_000);
        await handle.cancel();
        const err = await handle.result().then(
          () => null,
          (e: unknown) => e,
        );
        const closedAt = Date.now();
        assert.ok(err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure, String(err));
        assert.ok(runs[0]!.finishedAt !== undefined && runs[0]!.finishedAt <= closedAt, 'closed only after the batch finished');
        assert.equal(runs.length, 1, 'no new batch after the cancel');
      },
      {
        // The cancel reaches the activity with its next heartbeat, which the SDK otherwise
        // throttles to 80 % of the 20 s heartbeat timeout.
        maxHeartbeatThrottleInterval: '100ms',
        defaultHeartbeatThrottleInterval: '100ms',
      },
    );
  });
});
