import assert from 'node:assert/strict';
import type { EngagementAction, EngagementPlan, EngagementResult } from '../../activities/engagement';
import { engagePostWorkflow, engagementStatusQuery } from '../../workflows/engagePost';
import { reviewDecidedSignal, reviewPostWorkflow, reviewStatusQuery } from '../../workflows/reviewPost';
import { maybeRecordTierHistory } from '../support/histories';
import { waitFor } from '../support/wait';
import { withWorker } from '../support/workflowEnv';

// The review and engagement workflows alone (docs/review.md, docs/engagement.md) with stubbed
// activities. Real timers kept to seconds: no time-skipping server is available (support/workflowEnv.ts).

describe('review workflow (workflow tier)', function () {
  this.timeout(60_000);

  it('past the deadline the round is marked overdue once and keeps waiting; the decision signal ends it', async () => {
    const overdue: Array<{ round: number; at: number }> = [];
    await withWorker(
      {
        async markReviewOverdue(input: { postId: string; round: number }) {
          overdue.push({ round: input.round, at: Date.now() });
          return true;
        },
        async reviewRoundOpen() {
          return true;
        },
      },
      async (ctx) => {
        const deadlineMs = Date.now() + 1_500;
        const id = `review-post_tier-2-${ctx.taskQueue}`;
        const h = await ctx.client.workflow.start(reviewPostWorkflow, {
          taskQueue: ctx.taskQueue,
          workflowId: id,
          args: [{ postId: 'post_tier', round: 2, deadlineMs }],
        });
        assert.equal((await h.query(reviewStatusQuery)).state, 'waiting');
        await waitFor(async () => (await h.query(reviewStatusQuery)).state === 'overdue', 10_000, 'overdue');
        assert.equal(overdue.length, 1);
        assert.ok(overdue[0]!.at >= deadlineMs, 'not before the deadline');
        assert.equal(overdue[0]!.round, 2);
        // A signal for another round is ignored; the round's own ends the workflow. Nothing approved it meanwhile.
        await h.signal(reviewDecidedSignal, 1);
        assert.equal((await h.query(reviewStatusQuery)).state, 'overdue');
        await h.signal(reviewDecidedSignal, 2);
        assert.deepEqual(await h.result(), { outcome: 'closed', overdue: true });
        await maybeRecordTierHistory(ctx, id, 'reviewPost-tier-overdue-then-decided');
      },
    );
  });

  it('a decision before the deadline cancels the timer: never overdue', async () => {
    let overdueCalls = 0;
    await withWorker(
      {
        async markReviewOverdue() {
          overdueCalls++;
          return true;
        },
        async reviewRoundOpen() {
          return true;
        },
      },
      async (ctx) => {
        const h = await ctx.client.workflow.start(reviewPostWorkflow, {
          taskQueue: ctx.taskQueue,
          workflowId: `review-early-${ctx.taskQueue}`,
          args: [{ postId: 'post_tier', round: 1, deadlineMs: Date.now() + 60_000 }],
        });
        await h.signal(reviewDecidedSignal, 1);
        assert.deepEqual(await h.result(), { outcome: 'closed', overdue: false });
        assert.equal(overdueCalls, 0);
      },
    );
  });
});

describe('engagement workflow (workflow tier)', function () {
  this.timeout(60_000);

  it('each action waits its own jittered delay within [min, max], then runs once', async () => {
    const calls: Array<EngagementAction & { at: number }> = [];
    const plan: EngagementPlan = {
      actions: [
        { projectId: 'proj_a', kind: 'like' },
        { projectId: 'proj_b', kind: 'like' },
        { projectId: 'proj_a', kind: 'comment' },
        { projectId: 'proj_c', kind: 'like' },
      ],
      minDelayMs: 1_000,
      maxDelayMs: 3_000,
    };
    let startedAt = 0;
    await withWorker(
      {
        async planEngagement() {
          startedAt = Date.now();
          return plan;
        },
        async engage(input: { postId: string } & EngagementAction): Promise<EngagementResult> {
          calls.push({ projectId: input.projectId, kind: input.kind, at: Date.now() });
          return input.projectId === 'proj_c' ? { state: 'skipped', already: false } : { state: 'done', already: false };
        },
      },
      async (ctx) => {
        const id = `engage-post_tier-${ctx.taskQueue}`;
        const h = await ctx.client.workflow.start(engagePostWorkflow, {
          taskQueue: ctx.taskQueue,
          workflowId: id,
          args: [{ postId: 'post_tier' }],
        });
        assert.deepEqual(await h.result(), { planned: 4, done: 3, skipped: 1, failed: 0 });
        assert.deepEqual((await h.query(engagementStatusQuery)).planned, 4);
        await maybeRecordTierHistory(ctx, id, 'engagePost-tier-jittered');
      },
    );
    assert.equal(calls.length, 4, 'each action once');
    for (const c of calls) {
      const waited = c.at - startedAt;
      assert.ok(waited >= 900 && waited <= 3_000 + 1_500, `waited ${waited} ms`);
    }
    assert.ok(new Set(calls.map((c) => Math.round((c.at - startedAt) / 100))).size > 1, 'the delays differ');
  });
});
