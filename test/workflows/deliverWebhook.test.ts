import assert from 'node:assert/strict';
import type { AttemptResult, DeliverWebhookInput } from '../../activities/webhooks';
import { retryDelayMs } from '../../lib/webhooks/schedule';
import { deliveryStatusQuery } from '../../lib/temporal/contracts/deliverWebhook';
import { deliverWebhookWorkflow } from '../../workflows/deliverWebhook';
import { maybeRecordTierHistory } from '../support/histories';
import { waitFor } from '../support/wait';
import { withWorker, type WorkflowTestContext } from '../support/workflowEnv';

// The delivery workflow alone (workflows/deliverWebhook.ts, spec 6): the attempt activity is a
// stub that answers per attempt; the schedule is read through the workflow's status query.

interface Attempt {
  attempt: number;
  retryInMs: number | null;
  at: number;
}

function stub(answer: (attempt: number) => AttemptResult, seen: Attempt[]) {
  return {
    async attemptWebhookDelivery(input: { deliveryId: string; attempt: number; retryInMs: number | null }): Promise<AttemptResult> {
      seen.push({ attempt: input.attempt, retryInMs: input.retryInMs, at: Date.now() });
      return answer(input.attempt);
    },
  };
}

function start(ctx: WorkflowTestContext, name: string, retry: DeliverWebhookInput['retry']) {
  return ctx.client.workflow.start(deliverWebhookWorkflow, {
    taskQueue: ctx.taskQueue,
    workflowId: `webhook-${name}-${ctx.taskQueue}`,
    args: [{ deliveryId: `whd_${name}`, eventId: `evt_${name}`, endpointId: 'whe_1', retry }],
  });
}

/** The jittered wait after `attempt`: within ±10 % of the schedule (lib/webhooks/schedule.ts). */
function assertJittered(ms: number | null, attempt: number, baseMs: number) {
  const plain = retryDelayMs(attempt, baseMs);
  assert.ok(
    ms !== null && ms >= Math.floor(plain * 0.9) && ms <= Math.ceil(plain * 1.1),
    `wait ${ms} after attempt ${attempt}, schedule ${plain}`,
  );
}

describe('webhook delivery workflow (workflow tier: stubbed attempts, own task queue)', function () {
  this.timeout(60_000);

  it('retries on the schedule until the receiver accepts', async () => {
    const seen: Attempt[] = [];
    const answer = (n: number): AttemptResult => (n < 3 ? { outcome: 'retry', error: 'HTTP 500' } : { outcome: 'delivered' });
    await withWorker(stub(answer, seen), async (ctx) => {
      const handle = await start(ctx, 'retried', { baseMs: 200, maxAttempts: 5 });
      const waiting = await waitFor(
        async () => {
          const s = await handle.query(deliveryStatusQuery);
          return s.state === 'waiting' && s.attempt === 2 && s;
        },
        20_000,
        'waiting after attempt 2',
        20,
      );
      assert.equal(waiting.lastError, 'HTTP 500');
      assert.ok(waiting.nextAttemptAtMs !== null && waiting.nextAttemptAtMs > seen[1]!.at, 'the next attempt is ahead');
      assert.deepEqual(await handle.result(), { outcome: 'delivered', attempts: 3 });
      assert.deepEqual(
        seen.map((a) => a.attempt),
        [1, 2, 3],
      );
      assertJittered(seen[0]!.retryInMs, 1, 200);
      assertJittered(seen[1]!.retryInMs, 2, 200);
      // Each attempt is told its wait before it runs (to record next_attempt_at); the timer keeps it.
      for (const i of [1, 2]) assert.ok(seen[i]!.at - seen[i - 1]!.at >= seen[i - 1]!.retryInMs! - 50, `attempt ${i + 1} came early`);
      assert.equal((await handle.query(deliveryStatusQuery)).state, 'delivered');
      await maybeRecordTierHistory(ctx, handle.workflowId, 'deliverWebhook-query-retried-then-delivered');
    });
  });

  it('gives up after the last attempt, which is told no retry follows', async () => {
    const seen: Attempt[] = [];
    await withWorker(
      stub(() => ({ outcome: 'retry', error: 'connection refused' }), seen),
      async (ctx) => {
        const handle = await start(ctx, 'exhausted', { baseMs: 100, maxAttempts: 3 });
        assert.deepEqual(await handle.result(), { outcome: 'failed', attempts: 3, reason: 'connection refused' });
        assert.deepEqual(
          seen.map((a) => a.attempt),
          [1, 2, 3],
        );
        assert.equal(seen[2]!.retryInMs, null, 'the last attempt records the delivery as failed (and counts into the endpoint streak)');
        const s = await handle.query(deliveryStatusQuery);
        assert.deepEqual([s.state, s.attempt, s.nextAttemptAtMs], ['failed', 3, null]);
      },
    );
  });

  it('stops retrying at once when the endpoint was disabled meanwhile (auto-disable after a failure streak)', async () => {
    const seen: Attempt[] = [];
    const disabled = 'endpoint_inactive: repeated_failures: 10 consecutive deliveries failed permanently';
    const answer = (n: number): AttemptResult =>
      n === 1 ? { outcome: 'retry', error: 'HTTP 503' } : { outcome: 'failed', reason: disabled };
    await withWorker(stub(answer, seen), async (ctx) => {
      const handle = await start(ctx, 'disabled', { baseMs: 100, maxAttempts: 8 });
      assert.deepEqual(await handle.result(), { outcome: 'failed', attempts: 2, reason: disabled });
      assert.equal(seen.length, 2, 'no attempt after the endpoint was disabled');
      assert.equal((await handle.query(deliveryStatusQuery)).lastError, disabled);
    });
  });
});
