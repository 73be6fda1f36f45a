import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import type { CompleteOutcome, Draft, StartOutcome } from '../../activities/generation';
import type { JobStatus } from '../../lib/jobs/row';
import { generatePostWorkflow, jobProgressQuery } from '../../workflows/generatePost';
import { maybeRecordTierHistory } from '../support/histories';
import { waitFor } from '../support/wait';
import { gate, withWorker, type WorkflowTestContext } from '../support/workflowEnv';

// The generation workflow alone (workflows/generatePost.ts, spec 2.12 / 3.2): the job row is a
// stub, and the answers are read through the workflow's own progress query, the one the API's
// GET /v1/jobs/{id} asks (lib/temporal/start/jobs.ts).

interface Calls {
  start: number;
  write: number;
  complete: Draft[];
  fail: Array<{ errorCode: string }>;
  abandon: number;
}

function activities(
  over: Partial<{
    start: () => Promise<StartOutcome>;
    write: () => Promise<Draft>;
    complete: () => Promise<CompleteOutcome>;
  }>,
  calls: Calls,
) {
  return {
    async startGenerationJob(): Promise<StartOutcome> {
      calls.start++;
      return over.start ? over.start() : { running: true };
    },
    async writeGenerationDraft(): Promise<Draft> {
      calls.write++;
      return over.write ? over.write() : { content: 'A post', title: 'Title' };
    },
    async completeGenerationJob(input: { jobId: string; draft: Draft }): Promise<CompleteOutcome> {
      calls.complete.push(input.draft);
      return over.complete ? over.complete() : { status: 'DONE', postId: 'post_generated' };
    },
    async failGenerationJob(input: { jobId: string; errorCode: string }): Promise<{ status: JobStatus }> {
      calls.fail.push({ errorCode: input.errorCode });
      return { status: 'FAILED' };
    },
    async abandonGenerationJob(): Promise<{ status: JobStatus }> {
      calls.abandon++;
      return { status: 'CANCELLED' };
    },
  };
}

const newCalls = (): Calls => ({ start: 0, write: 0, complete: [], fail: [], abandon: 0 });

function startJob(ctx: WorkflowTestContext, jobId: string) {
  return ctx.client.workflow.start(generatePostWorkflow, {
    taskQueue: ctx.taskQueue,
    workflowId: `${jobId}-${ctx.taskQueue}`,
    args: [{ jobId, workspaceId: 'ws_1', projectId: 'proj_1' }],
  });
}

describe('generation workflow (workflow tier: stubbed activities, own task queue)', function () {
  this.timeout(60_000);

  it('reports its progress through the progress query while writing, then done', async () => {
    const calls = newCalls();
    const writing = gate<Draft>();
    await withWorker(activities({ write: () => writing.promise }, calls), async (ctx) => {
      const handle = await startJob(ctx, 'job_progress');
      const during = await waitFor(
        async () => {
          const p = await handle.query(jobProgressQuery);
          return p.progress === 0.1 && p;
        },
        20_000,
        'writing',
        50,
      );
      assert.equal(during.message, 'Writing the post');
      assert.ok(!Number.isNaN(Date.parse(during.updatedAt)));
      writing.open({ content: 'Drafted', title: 'T' });
      assert.deepEqual(await handle.result(), { status: 'DONE', postId: 'post_generated' });
      const after = await handle.query(jobProgressQuery);
      assert.deepEqual([after.progress, after.message], [1, 'Done']);
      assert.deepEqual(calls.complete, [{ content: 'Drafted', title: 'T' }]);
      await maybeRecordTierHistory(ctx, handle.workflowId, 'generatePost-progress-done-local-rows');
    });
  });

  it('a cancel while the job is still QUEUED ends it cancelled, without writing', async () => {
    const calls = newCalls();
    const queued = gate<StartOutcome>();
    await withWorker(activities({ start: () => queued.promise }, calls), async (ctx) => {
      const handle = await startJob(ctx, 'job_cancel_queued');
      await waitFor(async () => calls.start === 1, 20_000, 'the start activity', 50);
      await handle.cancel();
      const err = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError, String(err));
      assert.ok(err.cause instanceof CancelledFailure, String(err.cause));
      assert.equal(calls.abandon, 1, 'settles the row even though the cancel came from Temporal');
      assert.equal(calls.write, 0, 'the writer never ran');
      assert.equal((await handle.query(jobProgressQuery)).message, 'Cancelled; the job is CANCELLED');
      queued.open({ running: false, status: 'CANCELLED' });
      await maybeRecordTierHistory(ctx, handle.workflowId, 'generatePost-cancelled-in-start-local-rows');
    });
  });

  it('a job the API already cancelled ends at its first step', async () => {
    const calls = newCalls();
    await withWorker(activities({ start: async () => ({ running: false, status: 'CANCELLED' }) }, calls), async (ctx) => {
      const handle = await startJob(ctx, 'job_row_cancelled');
      assert.deepEqual(await handle.result(), { status: 'CANCELLED' });
      assert.equal((await handle.query(jobProgressQuery)).message, 'Cancelled');
      assert.equal(calls.write, 0);
    });
  });

  it('a writer failure another try cannot fix fails the job at once with its code', async () => {
    const calls = newCalls();
    const write = async (): Promise<Draft> => {
      throw ApplicationFailure.nonRetryable('the model refused', 'llm_invalid_request');
    };
    await withWorker(activities({ write }, calls), async (ctx) => {
      const handle = await startJob(ctx, 'job_not_retryable');
      assert.deepEqual(await handle.result(), { status: 'FAILED', errorCode: 'llm_invalid_request' });
      assert.equal(calls.write, 1, 'not retried');
      assert.deepEqual(calls.fail, [{ errorCode: 'llm_invalid_request' }]);
      assert.equal((await handle.query(jobProgressQuery)).message, 'Failed: llm_invalid_request');
      await maybeRecordTierHistory(ctx, handle.workflowId, 'generatePost-failed-not-retryable-local-rows');
    });
  });

  it('a row transition that keeps failing as a local activity is retried as a queued activity (job processing paused)', async () => {
    const calls = newCalls();
    let failures = 0;
    const start = async (): Promise<StartOutcome> => {
      // Paused for the local attempts (3) and the first queued one; then resumed.
      if (++failures <= 4) throw ApplicationFailure.retryable('Job processing is paused.', 'jobs_paused');
      return { running: true };
    };
    await withWorker(activities({ start }, calls), async (ctx) => {
      const handle = await startJob(ctx, 'job_paused_then_resumed');
      assert.deepEqual(await handle.result(), { status: 'DONE', postId: 'post_generated' });
      assert.equal(calls.start, 5, 'three local attempts, then the queued activity until it succeeds');
      assert.equal(calls.write, 1);
      await maybeRecordTierHistory(ctx, handle.workflowId, 'generatePost-start-fell-back-to-queued-local-rows');
    });
  });

  it('a retryable writer failure is retried a bounded number of times, then fails the job', async () => {
    const calls = newCalls();
    const write = async (): Promise<Draft> => {
      throw ApplicationFailure.retryable('upstream 503', 'llm_unavailable');
    };
    await withWorker(activities({ write }, calls), async (ctx) => {
      const handle = await startJob(ctx, 'job_retries');
      assert.deepEqual(await handle.result(), { status: 'FAILED', errorCode: 'llm_unavailable' });
      assert.equal(calls.write, 4, 'maximumAttempts 4: each attempt costs money');
      assert.deepEqual(calls.fail, [{ errorCode: 'llm_unavailable' }]);
    });
  });
});
