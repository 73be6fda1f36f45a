import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { finishJob } from '../../lib/jobs/finish';
import { progressNow } from '../../lib/jobs/row';
import { settleJobSpend, settleUnsettledJobs } from '../../lib/spend/settlement';
import { client } from '../support/app';
import { uniqueKey, workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { draftsOf, generationBody, recordIfAsked, useHarness, waitForJob, workflowClosed } from './support';

// spec 3.2 / 4.8: only a QUEUED job can be cancelled, twice is safe, and a cancel racing the
// worker's start never leaves a draft behind a CANCELLED job.

describe('generation job cancellation', function () {
  this.timeout(180_000);
  const h = useHarness({ worker: false });

  async function fresh() {
    const ws = await workspaceWithKey();
    return { ...ws, call: client(h.api.url, ws.key) };
  }

  describe('while no worker polls the task queue', () => {
    before(async () => {
      await h.stopWorker();
    });

    it('settles a final job whose settlement did not follow its COMMIT through the reconciler, once', async () => {
      const { call, project, workspace } = await fresh();
      const id = (await call('POST', '/v1/posts/generations', { body: generationBody(project.id) })).body.data.id;
      // The final state committed and the process died before the settlement statement.
      await db().transaction((trx) => finishJob(trx, id, { status: 'CANCELLED', progress: progressNow(0, 'Cancelled') }));
      const meters = async () => {
        const day = await db()('ai_spend_days').where({ workspace_id: workspace.id }).first();
        const week = await db()('ai_budget_weeks').where({ workspace_id: workspace.id, budget_key: project.id }).first();
        return { day: [day.spent_cents, day.reserved_cents], week: [week.spent_cents, week.reserved_cents] };
      };
      // Until it is settled, the reservation still counts.
      assert.deepEqual(await meters(), { day: [0, 5], week: [0, 5] });
      // A pass leaves a job alone right after its final state (its own finisher settles it).
      assert.equal(await settleUnsettledJobs(db(), 30), 0);
      await db()('jobs')
        .where({ id })
        .update({ completed_at: db().raw(`now() - interval '1 minute'`) });
      assert.equal(await settleUnsettledJobs(db(), 30), 1);
      assert.deepEqual(await meters(), { day: [0, 0], week: [0, 0] });
      // The claim settles once: a second pass, and the finisher's own late attempt, change nothing.
      assert.equal(await settleUnsettledJobs(db(), 30), 0);
      assert.equal(await settleJobSpend(db(), id), false);
      assert.deepEqual(await meters(), { day: [0, 0], week: [0, 0] });
    });

    it('cancels a QUEUED job, answers a second cancel with the same job, releases the spend, and the workflow ends without a draft', async () => {
      const { call, project, workspace } = await fresh();
      const created = await call('POST', '/v1/posts/generations', { body: generationBody(project.id) });
      assert.equal(created.body.data.status, 'QUEUED');
      const id = created.body.data.id;
      const reserved = await db()('ai_spend_days').where({ workspace_id: workspace.id }).first();
      assert.equal(reserved.reserved_cents, 5);

      const cancelled = await call('POST', `/v1/jobs/${id}/cancel`);
      assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
      assert.equal(cancelled.headers.get('idempotent-replayed'), 'false');
      const job = cancelled.body.data;
      assert.equal(job.status, 'CANCELLED');
      assert.ok(job.completedAt);
      assert.equal(job.startedAt, null);
      assert.equal(job.result, null);
      assert.equal(job.progress.message, 'Cancelled');

      const again = await call('POST', `/v1/jobs/${id}/cancel`, { headers: { 'Idempotency-Key': uniqueKey() } });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body.data, job, 'cancelling twice changes nothing');

      const released = await db()('ai_spend_days').where({ workspace_id: workspace.id }).first();
      assert.deepEqual({ spent: released.spent_cents, reserved: released.reserved_cents }, { spent: 0, reserved: 0 });
      const events = await db()('outbox_events')
        .where({ workspace_id: workspace.id, type: 'job.completed' })
        .andWhereRaw(`data->'job'->>'id' = ?`, [id]);
      assert.equal(events.length, 1);
      assert.equal(events[0].data.job.status, 'CANCELLED');

      await h.startWorker();
      try {
        assert.equal(await workflowClosed(id), 'CANCELLED');
        assert.equal((await db()('jobs').where({ id }).first()).status, 'CANCELLED');
        assert.deepEqual(await draftsOf(id), []);
        assert.equal(h.stub.requests.length, 0, 'the writer was never called');
        await recordIfAsked(id, 'cancelled-while-queued');
      } finally {
        await h.stopWorker();
      }
    });

    it('ends a workflow that missed the Temporal cancel when it finds its row CANCELLED', async () => {
      const { call, project } = await fresh();
      const id = (await call('POST', '/v1/posts/generations', { body: generationBody(project.id) })).body.data.id;
      // The API's commit happened but its request to Temporal was lost.
      await db().transaction((trx) => finishJob(trx, id, { status: 'CANCELLED', progress: progressNow(0, 'Cancelled') }));
      await h.startWorker();
      try {
        assert.equal(await workflowClosed(id), 'COMPLETED');
        assert.deepEqual(await draftsOf(id), []);
        assert.equal(h.stub.requests.length, 0);
        await recordIfAsked(id, 'found-row-cancelled');
      } finally {
        await h.stopWorker();
      }
    });

    it("shows the row's progress when the workflow cannot answer its progress query", async () => {
      const { call, project } = await fresh();
      const id = (await call('POST', '/v1/posts/generations', { body: generationBody(project.id) })).body.data.id;
      const recorded = progressNow(0.1, 'Writing the post (attempt 2)');
      // As a worker that died mid-job leaves it: RUNNING, with nobody to answer the query.
      await db()('jobs')
        .where({ id })
        .update({ status: 'RUNNING', progress: JSON.stringify(recorded) });
      const started = Date.now();
      const r = await call('GET', `/v1/jobs/${id}`);
      assert.equal(r.status, 200);
      assert.ok(Date.now() - started < 5_000);
      assert.deepEqual(r.body.data.progress, recorded);
      await db()('jobs').where({ id }).update({ status: 'QUEUED' });
      assert.equal((await call('POST', `/v1/jobs/${id}/cancel`)).body.data.status, 'CANCELLED');
    });

    it('clamps wait_for_completion_ms to 25,000 and answers the queued job in the same shape', async () => {
      const { call, project } = await fresh();
      const started = Date.now();
      const r = await call('POST', '/v1/posts/generations', { body: generationBody(project.id, { wait_for_completion_ms: 600_000 }) });
      const elapsed = Date.now() - started;
      assert.equal(r.status, 200);
      assert.equal(r.body.data.status, 'QUEUED');
      assert.ok(elapsed >= 25_000 && elapsed < 28_000, `answered after ${elapsed} ms`);
      assert.equal((await call('POST', `/v1/jobs/${r.body.data.id}/cancel`)).body.data.status, 'CANCELLED');
    });
  });

  describe('with a worker', () => {
    before(async () => {
      await h.startWorker();
    });
    after(async () => {
      await h.stopWorker();
    });

    it('answers 409 conflict with details.status for a RUNNING or finished job and leaves it alone', async () => {
      const { call, project } = await fresh();
      h.stub.setLatency(2_000);
      const id = (await call('POST', '/v1/posts/generations', { body: generationBody(project.id) })).body.data.id;
      await waitForJob(id, (s) => s === 'RUNNING');
      const running = assertError(await call('POST', `/v1/jobs/${id}/cancel`), 409, 'conflict');
      assert.deepEqual(running.details, { reason: 'job_not_cancellable', status: 'RUNNING', retryable: false });
      assert.equal((await waitForJob(id)).status, 'DONE');
      const done = assertError(await call('POST', `/v1/jobs/${id}/cancel`), 409, 'conflict');
      assert.equal(done.details!.status, 'DONE');
      assert.equal((await draftsOf(id)).length, 1);
    });

    it('answers 404 for a job of another workspace or no job at all', async () => {
      const a = await fresh();
      const b = await fresh();
      const id = (await a.call('POST', '/v1/posts/generations', { body: generationBody(a.project.id) })).body.data.id;
      assertError(await b.call('POST', `/v1/jobs/${id}/cancel`), 404, 'not_found');
      assertError(await b.call('GET', `/v1/jobs/${id}`), 404, 'not_found');
      assertError(await a.call('POST', '/v1/jobs/job_doesnotexist/cancel'), 404, 'not_found');
      await waitForJob(id);
    });

    it('never lets a cancel and a starting worker both win: CANCELLED ⇒ no draft, DONE ⇒ exactly one', async () => {
      // Delays from "at once" to "well after the worker started": both outcomes must occur. A job
      // starts when the jobs queue's worker takes it (lib/temporal/contracts/queues.ts), which on
      // a loaded machine can take longer than 300 ms, hence the last two.
      const delays = [0, 0, 0, 2, 5, 10, 20, 40, 80, 300, 1_000, 2_500];
      const workspaces = await Promise.all([0, 1, 2, 3].map(() => fresh()));
      const outcomes: Array<{ id: string; cancel: number; projectId: string }> = [];
      for (const ws of workspaces) {
        // 15 jobs per workspace keeps each within the write bucket (60 per minute) with their cancels.
        const batch = await Promise.all(
          Array.from({ length: 15 }, async (_, i) => {
            const created = await ws.call('POST', '/v1/posts/generations', { body: generationBody(ws.project.id) });
            assert.equal(created.status, 200, JSON.stringify(created.body));
            await sleep(delays[i % delays.length]!);
            const cancel = await ws.call('POST', `/v1/jobs/${created.body.data.id}/cancel`);
            assert.ok(cancel.status === 200 || cancel.status === 409, JSON.stringify(cancel.body));
            if (cancel.status === 200) assert.equal(cancel.body.data.status, 'CANCELLED');
            return { id: created.body.data.id as string, cancel: cancel.status, projectId: ws.project.id };
          }),
        );
        outcomes.push(...batch);
      }

      let cancelled = 0;
      let done = 0;
      const donePerProject = new Map<string, number>();
      for (const o of outcomes) {
        const row = await waitForJob(o.id);
        const drafts = await draftsOf(o.id);
        if (row.status === 'CANCELLED') {
          cancelled++;
          assert.equal(o.cancel, 200, `${o.id}: CANCELLED although the cancel was refused`);
          assert.deepEqual(drafts, [], `${o.id}: a cancelled job has a draft`);
          assert.equal(row.result, null);
          assert.equal(row.started_at, null);
        } else {
          assert.equal(row.status, 'DONE', `${o.id}: ${row.status} ${row.error_code}`);
          done++;
          donePerProject.set(o.projectId, (donePerProject.get(o.projectId) ?? 0) + 1);
          assert.equal(o.cancel, 409, `${o.id}: DONE although the cancel was accepted`);
          assert.equal(drafts.length, 1, `${o.id}: ${drafts.length} drafts`);
          assert.equal(drafts[0]!.id, row.result.postId);
        }
        assert.notEqual(await workflowClosed(o.id), 'RUNNING');
      }
      for (const ws of workspaces) {
        const posts = await db()('posts').where({ project_id: ws.project.id }).count('* as n').first();
        assert.equal(Number(posts!.n), donePerProject.get(ws.project.id) ?? 0, 'one post per DONE job and none besides');
        const day = await db()('ai_spend_days').where({ workspace_id: ws.workspace.id }).first();
        assert.equal(day.reserved_cents, 0, 'every reservation was settled');
      }
      assert.equal(cancelled + done, outcomes.length);
      assert.ok(cancelled > 0 && done > 0, `the race was not exercised: ${cancelled} cancelled, ${done} done`);
    });
  });
});
