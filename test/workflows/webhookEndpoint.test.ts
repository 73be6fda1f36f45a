import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import type { DeliveryPassResult, WebhookEndpointInput } from '../../activities/webhooks';
import { endpointDeliveryStatusQuery, webhookDeliveriesReadySignal } from '../../lib/temporal/contracts/deliverWebhook';
import { webhookEndpointWorkflow } from '../../workflows/webhookEndpoint';
import { waitFor } from '../support/wait';
import { withWorker, type WorkflowTestContext } from '../support/workflowEnv';

// The endpoint's delivery workflow alone (workflows/webhookEndpoint.ts, docs/webhooks.md "How it
// runs"): the pass activity is a stub answering pass by pass, so what is asserted is when the
// workflow runs a pass, when it waits, when it continues as new and when it closes.

const idle = (over: Partial<DeliveryPassResult> = {}): DeliveryPassResult => ({
  attempted: 0,
  delivered: 0,
  retrying: 0,
  failed: 0,
  closed: 0,
  more: false,
  nextDueAtMs: null,
  ...over,
});

function stub(answer: (pass: number) => DeliveryPassResult, passes: number[]) {
  return {
    async deliverDueWebhooks(_input: WebhookEndpointInput): Promise<DeliveryPassResult> {
      passes.push(Date.now());
      return answer(passes.length);
    },
  };
}

function start(ctx: WorkflowTestContext, name: string, extra: Partial<WebhookEndpointInput> = {}) {
  return ctx.client.workflow.signalWithStart(webhookEndpointWorkflow, {
    taskQueue: ctx.taskQueue,
    workflowId: `webhook-endpoint-${name}-${ctx.taskQueue}`,
    args: [{ endpointId: `whe_${name}`, ...extra }],
    signal: webhookDeliveriesReadySignal,
    signalArgs: [],
  });
}

describe('webhook endpoint workflow (workflow tier: stubbed passes, own task queue)', function () {
  this.timeout(60_000);

  it('runs passes back to back while deliveries are left, waits for the next due retry, closes when idle', async () => {
    const passes: number[] = [];
    let dueAt = 0;
    const answer = (n: number) => {
      if (n <= 2) return idle({ attempted: 100, delivered: 100, more: true });
      if (n === 3) {
        dueAt = Date.now() + 800;
        return idle({ attempted: 1, retrying: 1, nextDueAtMs: dueAt });
      }
      return idle({ attempted: 1, delivered: 1 });
    };
    await withWorker(stub(answer, passes), async (ctx) => {
      const handle = await start(ctx, 'drain', { idleCloseMs: 1_500 });
      await handle.result();
      assert.equal(passes.length, 4, 'three passes for the burst and the retry, then idle');
      assert.ok(passes[3]! >= dueAt - 50, `the retry pass ran ${dueAt - passes[3]!} ms before it was due`);
      assert.ok(passes[1]! - passes[0]! < 800 && passes[2]! - passes[1]! < 800, 'passes with work left run at once');
      const closedAfter = Date.now() - passes[3]!;
      assert.ok(closedAfter >= 1_400, `closed ${closedAfter} ms after the last pass, before the idle time`);
    });
  });

  it('a signal wakes a waiting workflow for a pass at once; a signal-with-start after the close opens a new run', async () => {
    const passes: number[] = [];
    await withWorker(
      stub(() => idle({ nextDueAtMs: Date.now() + 30_000 }), passes),
      async (ctx) => {
        const handle = await start(ctx, 'wake', { idleCloseMs: 500 });
        await waitFor(async () => passes.length === 1, 10_000, 'the first pass');
        await sleep(200);
        await handle.signal(webhookDeliveriesReadySignal);
        await waitFor(async () => passes.length === 2, 5_000, 'the pass the signal asked for');
        assert.ok(passes[1]! - passes[0]! < 5_000, 'woken long before the next due retry');
        assert.equal((await handle.query(endpointDeliveryStatusQuery)).passes, 2);
        await handle.terminate();
      },
    );
    const closed: number[] = [];
    await withWorker(
      stub(() => idle(), closed),
      async (ctx) => {
        const first = await start(ctx, 'reopen', { idleCloseMs: 300 });
        await first.result();
        const second = await start(ctx, 'reopen', { idleCloseMs: 300 });
        assert.notEqual(second.signaledRunId, first.signaledRunId);
        await ctx.client.workflow.getHandle(second.workflowId, second.signaledRunId).result();
        assert.equal(closed.length, 2, 'one pass per run');
      },
    );
  });

  it('continues as new to bound its history, carrying on with the next pass', async () => {
    const passes: number[] = [];
    await withWorker(
      stub((n) => (n < 12 ? idle({ attempted: 1, retrying: 1, nextDueAtMs: Date.now() + 20 }) : idle()), passes),
      async (ctx) => {
        const handle = await start(ctx, 'history', { idleCloseMs: 300, historyLimit: 20 });
        const firstRun = handle.signaledRunId;
        await ctx.client.workflow.getHandle(handle.workflowId).result();
        // Every pass the stub asked for ran; each new run opens with a pass of its own (it reads the
        // open deliveries afresh), so a continue-as-new costs at most one extra, empty pass.
        assert.ok(passes.length >= 12 && passes.length <= 14, `${passes.length} passes`);
        const first = await ctx.client.workflow.getHandle(handle.workflowId, firstRun).describe();
        assert.equal(first.status.name, 'CONTINUED_AS_NEW');
        const history = await ctx.client.workflow.getHandle(handle.workflowId, firstRun).fetchHistory();
        assert.ok((history.events?.length ?? 0) <= 40, `first run history ${history.events?.length} events`);
      },
    );
  });
});
