import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { workflowMetadataQuery } from '@temporalio/workflow';
import type { Draft } from '../../activities/generation';
import type { DeliveryPassResult, WebhookEndpointInput } from '../../activities/webhooks';
import { OPEN_COUNT_CAP, webhookDeliveriesReadySignal } from '../../lib/temporal/contracts/deliverWebhook';
import { zonedTime } from '../../lib/temporal/details';
import { webhookEndpointWorkflow } from '../../workflows/webhookEndpoint';
import { generatePostWorkflow } from '../../workflows/generatePost';
import { ingestKnowledgeWorkflow } from '../../workflows/ingestKnowledge';
import { publishPostWorkflow, scheduleChangedSignal } from '../../workflows/publishPost';
import { waitFor } from '../support/wait';
import { gate, withWorker } from '../support/workflowEnv';

// What the workflows tell an operator in the Temporal UI (docs/operations.md "What the workflows
// show"), read the way the UI reads it: the current details through the SDK's metadata query,
// the timers' summaries from the history. Stubbed activities on the workflow tier's own queue.

type Handle = Pick<WorkflowHandle, 'query' | 'fetchHistory'>;

function detailsWhere(handle: Handle, ok: (details: string) => boolean, what: string): Promise<string> {
  return waitFor(
    async () => {
      const d = (await handle.query(workflowMetadataQuery)).currentDetails ?? '';
      return ok(d) && d;
    },
    20_000,
    what,
    50,
  );
}

async function timerSummaries(handle: Handle): Promise<string[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events
    .filter((e) => e.timerStartedEventAttributes)
    .map((e) => (e.userMetadata?.summary ? String(defaultPayloadConverter.fromPayload(e.userMetadata.summary)) : '(none)'));
}

describe('workflow metadata for operators (current details, timer summaries)', function () {
  this.timeout(60_000);

  it('publish: what it waits for and until when in the post’s zone, then the backoff after a transient failure', async () => {
    const fireAt = Date.now() + 60 * 60_000;
    const schedule = {
      status: 'scheduled',
      version: 4,
      scheduledAtMs: fireAt - 30_000,
      delaySeconds: 30,
      retryWindowSeconds: 600,
      retryBaseSeconds: 1,
      timeZone: 'America/New_York',
    };
    let attempts = 0;
    const activities = {
      async loadSchedule() {
        return { ...schedule, scheduledAtMs: Date.now() - 30_000 };
      },
      async publishPost() {
        attempts++;
        return attempts === 1
          ? { outcome: 'transient', error: 'network answered 503\nretry later' }
          : { outcome: 'published', postUrn: 'urn:li:share:9' };
      },
      async markPublishFailed() {
        return true;
      },
    };
    await withWorker(activities, async (ctx) => {
      const handle = await ctx.client.workflow.start(publishPostWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `publish-metadata-${ctx.taskQueue}`,
        args: [{ postId: 'post_meta', schedule }],
      });
      const waiting = await detailsWhere(handle, (d) => d.startsWith('Waiting'), 'waiting details');
      assert.equal(
        waiting,
        `Waiting to publish at ${zonedTime(fireAt, 'America/New_York')}: the scheduled time ${zonedTime(fireAt - 30_000, 'America/New_York')} ` +
          'plus the 30 s publish delay. Schedule version 4; a move earlier wakes it, a later one or taking it off the schedule is read when it wakes.',
      );
      assert.match(waiting, /America\/New_York \(GMT-0[45]:00\)/);
      assert.deepEqual(await timerSummaries(handle), [`Publish time ${zonedTime(fireAt, 'America/New_York')} (schedule version 4)`]);

      // Due now (the row read by the signal says so): the first attempt fails transiently.
      await handle.signal(scheduleChangedSignal, 5);
      const retrying = await detailsWhere(handle, (d) => d.startsWith('Waiting to retry'), 'retry details');
      assert.match(retrying, /^Waiting to retry: attempt 1 failed \(network answered 503 retry later\); attempt 2 at .+ America\/New_York/);
      assert.deepEqual(await handle.result(), { outcome: 'published', postUrn: 'urn:li:share:9' });
      assert.equal(
        (await handle.query(workflowMetadataQuery)).currentDetails,
        'Published as urn:li:share:9 (attempt 2, schedule version 4).',
      );
      assert.deepEqual((await timerSummaries(handle)).slice(1), ['Backoff before publish attempt 2']);
    });
  });

  it('generation job: the step and its progress, as the progress query reports them', async () => {
    const writing = gate<Draft>();
    const activities = {
      startGenerationJob: async () => ({ running: true }),
      writeGenerationDraft: () => writing.promise,
      completeGenerationJob: async () => ({ status: 'DONE', postId: 'post_gen' }),
      failGenerationJob: async () => ({ status: 'FAILED' }),
      abandonGenerationJob: async () => ({ status: 'CANCELLED' }),
    };
    await withWorker(activities, async (ctx) => {
      const handle = await ctx.client.workflow.start(generatePostWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `job_meta-${ctx.taskQueue}`,
        args: [{ jobId: 'job_meta', workspaceId: 'ws_1', projectId: 'proj_1' }],
      });
      const during = await detailsWhere(handle, (d) => d.startsWith('Writing the post'), 'writing details');
      assert.match(during, /^Writing the post: 10% \(job job_meta, since \d{4}-\d\d-\d\dT[\d:.]+Z\)\.$/);
      writing.open({ content: 'Drafted', title: 'T' });
      await handle.result();
      assert.match((await handle.query(workflowMetadataQuery)).currentDetails ?? '', /^Done: 100% \(job job_meta/);
    });
  });

  it('knowledge ingest job: the same envelope names its own step', async () => {
    const reading = gate<{ documentId: string; chunkCount: number }>();
    const activities = {
      startKnowledgeJob: async () => ({ running: true }),
      ingestKnowledgeDocument: () => reading.promise,
      completeKnowledgeJob: async () => ({ status: 'DONE' }),
      failGenerationJob: async () => ({ status: 'FAILED' }),
      abandonGenerationJob: async () => ({ status: 'CANCELLED' }),
    };
    await withWorker(activities, async (ctx) => {
      const handle = await ctx.client.workflow.start(ingestKnowledgeWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `job_ingest_meta-${ctx.taskQueue}`,
        args: [{ jobId: 'job_ingest_meta', workspaceId: 'ws_1', projectId: 'proj_1' }],
      });
      await detailsWhere(handle, (d) => d.startsWith('Reading the source: 30% (job job_ingest_meta'), 'reading details');
      reading.open({ documentId: 'doc_1', chunkCount: 3 });
      await handle.result();
      assert.match((await handle.query(workflowMetadataQuery)).currentDetails ?? '', /^Done: 100%/);
    });
  });

  it('webhook endpoint: queue depth and the last failure, kept across passes; timers say what they wait for', async () => {
    const failedAt = Date.now() - 5_000;
    let dueAt = 0;
    const passes: Array<() => DeliveryPassResult> = [
      () => ({
        attempted: 3,
        delivered: 1,
        retrying: 2,
        failed: 0,
        closed: 0,
        more: false,
        // Long enough for the test to read the details before the retry pass runs.
        nextDueAtMs: (dueAt = Date.now() + 4_000),
        open: 7,
        lastFailure: { atMs: failedAt, error: 'HTTP 503 from the receiver' },
      }),
      () => ({ attempted: 2, delivered: 2, retrying: 0, failed: 0, closed: 0, more: false, nextDueAtMs: null, open: 0 }),
    ];
    let n = 0;
    const activities = {
      async deliverDueWebhooks(_input: WebhookEndpointInput): Promise<DeliveryPassResult> {
        return passes[Math.min(n++, passes.length - 1)]!();
      },
    };
    await withWorker(activities, async (ctx) => {
      const handle = await ctx.client.workflow.signalWithStart(webhookEndpointWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `webhook-endpoint-meta-${ctx.taskQueue}`,
        args: [{ endpointId: 'whe_meta', idleCloseMs: 1_500 }],
        signal: webhookDeliveriesReadySignal,
        signalArgs: [],
      });
      const first = await detailsWhere(handle, (d) => d.startsWith('Queue: 7'), 'the first pass');
      assert.equal(
        first,
        `Queue: 7 open deliveries (next due at ${zonedTime(dueAt)}). Pass 1: 3 attempted, 1 delivered, 2 to retry, 0 failed, 0 closed. ` +
          `Last failure at ${zonedTime(failedAt)}: HTTP 503 from the receiver.`,
      );
      await handle.result();
      const last = (await handle.query(workflowMetadataQuery)).currentDetails ?? '';
      assert.match(last, /^Queue: 0 open deliveries \(none waiting\)\. Pass 2: 2 attempted, 2 delivered/);
      assert.ok(
        last.endsWith(`Last failure at ${zonedTime(failedAt)}: HTTP 503 from the receiver.`),
        'a later pass keeps the last failure',
      );
      assert.deepEqual(await timerSummaries(handle), [
        `Until the next retry is due, ${zonedTime(dueAt)}`,
        'Idle: closes after 1.5 s without new deliveries',
      ]);
    });
  });

  it('webhook endpoint: a backlog past the count cap is shown as more', async () => {
    const activities = {
      async deliverDueWebhooks(): Promise<DeliveryPassResult> {
        return { attempted: 0, delivered: 0, retrying: 0, failed: 0, closed: 0, more: false, nextDueAtMs: null, open: OPEN_COUNT_CAP + 1 };
      },
    };
    await withWorker(activities, async (ctx) => {
      const handle = await ctx.client.workflow.signalWithStart(webhookEndpointWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `webhook-endpoint-backlog-${ctx.taskQueue}`,
        args: [{ endpointId: 'whe_backlog', idleCloseMs: 200 }],
        signal: webhookDeliveriesReadySignal,
        signalArgs: [],
      });
      await handle.result();
      assert.match(
        (await handle.query(workflowMetadataQuery)).currentDetails ?? '',
        /^Queue: more than 10000 open deliveries \(none waiting\)\. .* No failure in this run\.$/,
      );
    });
  });
});
