import assert from 'node:assert/strict';
import { Context } from '@temporalio/activity';
import type { Priority } from '@temporalio/common';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { newId, randomBase62 } from '../../lib/ids';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { DEPLOYMENT_FAIRNESS_KEY, WORK_PRIORITY } from '../../lib/temporal/contracts/priority';
import { startWorkflowOfJob } from '../../lib/jobs/queue';
import { ensureMetricsSync } from '../../lib/temporal/start/metricsSync';
import { syncPublishWorkflow } from '../../lib/temporal/start/publishPost';
import { wakeEndpoint } from '../../lib/temporal/start/webhookEndpoint';
import { maintenanceWorkflow } from '../../workflows/maintenance';
import { reviewPostWorkflow } from '../../workflows/reviewPost';
import { createWorkspace } from '../../admin/provision';
import { waitFor } from '../support/wait';
import { withWorker } from '../support/workflowEnv';

// Task queue priority and fairness (lib/temporal/contracts/priority.ts, docs/operations.md
// "Fairness between workspaces"): each starter keys its start by the workspace and the kind of
// work, as the server records it; activities inherit it, and the deployment's own workflows key
// their activities explicitly.

const describePriority = async (workflowId: string): Promise<Priority | undefined> =>
  (await (await temporalClient()).workflow.getHandle(workflowId).describe()).priority;

const terminate = async (workflowId: string) =>
  (await temporalClient()).workflow
    .getHandle(workflowId)
    .terminate('test done')
    .catch(() => undefined);

describe('task queue priority: what each starter sets', function () {
  this.timeout(60_000);
  // A queue no worker polls: the starts are only described, never run.
  const idleQueue = `priority-idle-${randomBase62(8)}`;

  it('a publish is keyed by its workspace at the publish level', async () => {
    const ws = await createWorkspace({ name: 'Publishing', plan: 'BUSINESS' });
    const postId = newId('post');
    await syncPublishWorkflow(await temporalClient(), { id: postId, workspace_id: ws.id, project_id: null, schedule_version: 1 });
    try {
      const priority = await describePriority(workflowIds.publish(postId));
      assert.deepEqual([priority?.priorityKey, priority?.fairnessKey], [WORK_PRIORITY.publish, ws.id]);
    } finally {
      await terminate(workflowIds.publish(postId));
    }
  });

  it('a generation someone started is keyed by its workspace, ahead of background work', async () => {
    const ws = await createWorkspace({ name: 'Generating', plan: 'BUSINESS' });
    // Withdrawn before it starts: the workflow finds the row CANCELLED at its first step and ends.
    const jobId = newId('job');
    await db()('jobs').insert({
      id: jobId,
      workspace_id: ws.id,
      project_id: null,
      type: 'POST_GENERATION',
      status: 'CANCELLED',
      input: JSON.stringify({ source: { type: 'text', text: 'Priority' }, options: {} }),
      progress: JSON.stringify({ progress: 0, updatedAt: new Date().toISOString(), message: 'Cancelled' }),
      estimated_completion_ms: 1000,
    });
    await startWorkflowOfJob({ id: jobId, type: 'POST_GENERATION', workspace_id: ws.id, project_id: 'proj_none' });
    const priority = await describePriority(workflowIds.generation(jobId));
    assert.equal(priority?.priorityKey, WORK_PRIORITY.generation);
    assert.equal(priority?.fairnessKey, ws.id);
    assert.ok(WORK_PRIORITY.generation < WORK_PRIORITY.metricsSync && WORK_PRIORITY.publish < WORK_PRIORITY.knowledgeResync);
  });

  it("an endpoint's deliveries are keyed by the endpoint's workspace", async () => {
    const endpointId = newId('webhookEndpoint');
    const workspaceId = `org_${randomBase62(24)}`;
    await wakeEndpoint(await temporalClient(), idleQueue, endpointId, workspaceId);
    try {
      const priority = await describePriority(workflowIds.webhookEndpoint(endpointId));
      assert.deepEqual([priority?.priorityKey, priority?.fairnessKey], [WORK_PRIORITY.webhook, workspaceId]);
    } finally {
      await terminate(workflowIds.webhookEndpoint(endpointId));
    }
  });

  it("work for every workspace (metrics sync) is background on the deployment's key", async () => {
    const workflowId = `metrics-sync-priority-${randomBase62(8)}`;
    assert.equal(await ensureMetricsSync(await temporalClient(), { workflowId, taskQueue: idleQueue }), true);
    try {
      const priority = await describePriority(workflowId);
      assert.deepEqual([priority?.priorityKey, priority?.fairnessKey], [WORK_PRIORITY.metricsSync, DEPLOYMENT_FAIRNESS_KEY]);
    } finally {
      await terminate(workflowId);
    }
  });

  it('TEMPORAL_FAIRNESS=false starts without a priority (first come, first served)', async () => {
    const workflowId = `metrics-sync-priority-${randomBase62(8)}`;
    (config as { temporalFairness: boolean }).temporalFairness = false;
    try {
      await ensureMetricsSync(await temporalClient(), { workflowId, taskQueue: idleQueue });
    } finally {
      (config as { temporalFairness: boolean }).temporalFairness = true;
    }
    try {
      const priority = await describePriority(workflowId);
      assert.ok(!priority?.priorityKey && !priority?.fairnessKey, JSON.stringify(priority));
    } finally {
      await terminate(workflowId);
    }
  });
});

describe('task queue priority: activities (workflow tier: stubbed activities, own task queue)', function () {
  this.timeout(60_000);

  it("an activity inherits its workflow's priority when it sets none", async () => {
    const seen: Array<Priority | undefined> = [];
    const activities = {
      async markReviewOverdue(): Promise<boolean> {
        seen.push(Context.current().info.priority);
        return true;
      },
      async reviewRoundOpen(): Promise<boolean> {
        return false;
      },
    };
    await withWorker(activities, async (ctx) => {
      const handle = await ctx.client.workflow.start(reviewPostWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `review-priority-${ctx.taskQueue}`,
        args: [{ postId: newId('post'), round: 1, deadlineMs: Date.now() - 1000 }],
        priority: { priorityKey: WORK_PRIORITY.review, fairnessKey: 'org_inherited' },
      });
      await waitFor(async () => seen.length > 0, 20_000, 'the overdue activity', 50);
      await handle.terminate('test done');
    });
    assert.equal(seen[0]?.priorityKey, WORK_PRIORITY.review);
    assert.equal(seen[0]?.fairnessKey, 'org_inherited');
  });

  it("the reconciler's activities are background on the deployment's key, even in a run started without one", async () => {
    const seen: Array<Priority | undefined> = [];
    const record = async () => {
      seen.push(Context.current().info.priority);
      return {};
    };
    await withWorker({ reconcile: record, reconcileReviewsAndJobs: record }, async (ctx) => {
      const handle = await ctx.client.workflow.start(maintenanceWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `maintenance-priority-${ctx.taskQueue}`,
        args: [{ intervalSeconds: 60 }],
      });
      await waitFor(async () => seen.length >= 2, 20_000, 'both reconciler activities', 50);
      await handle.terminate('test done');
    });
    for (const p of seen.slice(0, 2)) {
      assert.equal(p?.priorityKey, WORK_PRIORITY.maintenance);
      assert.equal(p?.fairnessKey, DEPLOYMENT_FAIRNESS_KEY);
    }
  });
});
