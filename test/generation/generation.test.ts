import assert from 'node:assert/strict';
import { createProject, issueApiKey } from '../../admin/provision';
import { db } from '../../lib/db';
import { SEARCH, temporalClient } from '../../lib/temporal/client';
import type { LlmStubFailure } from '../../sim/llm/server';
import { client } from '../support/app';
import { workspaceWithKey, uniqueKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { draftsOf, generationBody, recordIfAsked, useHarness, waitForJob, workflowClosed } from './support';
import { waitFor } from '../support/wait';

// spec 4.4 POST /v1/posts/generations and the job lifecycle of spec 3.2, end to end against the
// real Temporal dev server, an in-process worker and the LLM stub.

describe('post generation (real Temporal, in-process worker, LLM stub)', function () {
  this.timeout(90_000);
  const h = useHarness();

  // A fresh workspace per test: the write bucket allows 60 calls a minute per workspace.
  async function fresh(opts: Parameters<typeof workspaceWithKey>[0] = {}) {
    const ws = await workspaceWithKey(opts);
    return { ...ws, call: client(h.api.url, ws.key) };
  }

  describe('lifecycle', () => {
    it('queues a job, runs it to DONE and leaves one unscheduled draft named by result.postId', async () => {
      const { call, project, workspace } = await fresh();
      const created = await call('POST', '/v1/posts/generations', {
        body: generationBody(project.id, { scheduledFor: new Date(Date.now() + 86_400_000).toISOString() }),
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.headers.get('idempotent-replayed'), 'false');
      const job = created.body.data;
      assert.match(job.id, /^job_/);
      assert.equal(job.type, 'POST_GENERATION');
      assert.equal(job.status, 'QUEUED');
      assert.equal(job.projectId, project.id);
      assert.equal(job.result, null);
      assert.equal(job.errorCode, null);
      assert.equal(job.attemptCount, 0);
      assert.ok(Number.isInteger(job.estimatedCompletionMs) && job.estimatedCompletionMs > 0);
      assert.equal(job.progress.progress, 0);
      assert.deepEqual(
        Object.keys(job).sort(),
        [
          'attemptCount',
          'completedAt',
          'createdAt',
          'errorCode',
          'errorMessage',
          'estimatedCompletionMs',
          'id',
          'progress',
          'projectId',
          'result',
          'startedAt',
          'status',
          'type',
          'updatedAt',
        ].sort(),
      );

      await waitForJob(job.id);
      const got = await call('GET', `/v1/jobs/${job.id}`);
      assert.equal(got.status, 200);
      const done = got.body.data;
      assert.equal(done.status, 'DONE', JSON.stringify(done));
      assert.equal(done.attemptCount, 1);
      assert.ok(done.startedAt && done.completedAt);
      assert.ok(Date.parse(done.completedAt) >= Date.parse(done.startedAt));
      assert.deepEqual(done.progress && { progress: done.progress.progress, message: done.progress.message }, {
        progress: 1,
        message: 'Done',
      });
      assert.match(done.result.postId, /^post_/);

      const post = await call('GET', `/v1/posts/${done.result.postId}`);
      assert.equal(post.status, 200);
      // spec 3.1: a generation job writes a draft and never schedules, even with scheduledFor.
      assert.equal(post.body.data.status, 'draft');
      assert.equal(post.body.data.scheduledAt, null);
      assert.equal(post.body.data.contentType, 'PERSONAL');
      assert.match(post.body.data.content, /checklist/i);
      assert.ok(post.body.data.title.length > 0);
      assert.deepEqual(
        (await draftsOf(job.id)).map((p) => p.id),
        [done.result.postId],
      );
      assert.equal(await db()('calendar_slots').where({ post_id: done.result.postId }).first(), undefined);

      // spec 6: job.completed went through the outbox with the final job.
      const events = await db()('outbox_events')
        .where({ workspace_id: workspace.id, type: 'job.completed' })
        .andWhereRaw(`data->'job'->>'id' = ?`, [job.id]);
      assert.equal(events.length, 1);
      assert.equal(events[0].data.job.status, 'DONE');
      assert.equal(events[0].data.job.result.postId, done.result.postId);
      assert.equal(await workflowClosed(job.id), 'COMPLETED');
      await recordIfAsked(job.id, 'done');
    });

    it('names the workflow after the job, with search attributes and a readable summary', async () => {
      const { call, project, workspace } = await fresh();
      const created = await call('POST', '/v1/posts/generations', { body: generationBody(project.id, { wait_for_completion_ms: 10_000 }) });
      const c = await temporalClient();
      const d = await c.workflow.getHandle(created.body.data.id).describe();
      assert.equal(d.workflowId, created.body.data.id);
      assert.equal(d.type, 'generatePostWorkflow');
      assert.deepEqual(d.typedSearchAttributes.get(SEARCH.job), created.body.data.id);
      assert.deepEqual(d.typedSearchAttributes.get(SEARCH.workspace), workspace.id);
      assert.deepEqual(d.typedSearchAttributes.get(SEARCH.project), project.id);
      assert.match((await d.staticSummary()) ?? '', new RegExp(project.id));
    });

    it('answers DONE inside the wait_for_completion_ms hint, same shape as a queued answer', async () => {
      const { call, project } = await fresh();
      const started = Date.now();
      const r = await call('POST', '/v1/posts/generations', { body: generationBody(project.id, { wait_for_completion_ms: 20_000 }) });
      const elapsed = Date.now() - started;
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.data.status, 'DONE');
      assert.ok(elapsed < 20_000, `answered after ${elapsed} ms`);
      assert.match(r.body.data.result.postId, /^post_/);
      assert.equal(r.body.data.progress.progress, 1);
    });

    it('stops waiting at the hint and answers the job as it is then', async () => {
      const { call, project } = await fresh();
      h.stub.setLatency(3_000);
      const started = Date.now();
      const r = await call('POST', '/v1/posts/generations', { body: generationBody(project.id, { wait_for_completion_ms: 800 }) });
      const elapsed = Date.now() - started;
      assert.equal(r.status, 200);
      assert.ok(['QUEUED', 'RUNNING'].includes(r.body.data.status), r.body.data.status);
      assert.ok(elapsed >= 800 && elapsed < 2_500, `answered after ${elapsed} ms`);
      assert.equal((await waitForJob(r.body.data.id)).status, 'DONE');
    });

    it("shows the running workflow's progress on GET /v1/jobs/{id}", async () => {
      const { call, project } = await fresh();
      h.stub.setLatency(2_500);
      const r = await call('POST', '/v1/posts/generations', { body: generationBody(project.id) });
      const id = r.body.data.id;
      await waitForJob(id, (s) => s === 'RUNNING');
      // Make the row's copy older than, and different from, the workflow's answer.
      const stale = { progress: 0.05, updatedAt: new Date(Date.now() - 60_000).toISOString(), message: 'row copy' };
      await db()('jobs')
        .where({ id })
        .update({ progress: JSON.stringify(stale) });
      const running = await call('GET', `/v1/jobs/${id}`);
      assert.equal(running.body.data.status, 'RUNNING');
      assert.equal(running.body.data.progress.progress, 0.1);
      assert.equal(running.body.data.progress.message, 'Writing the post');
      assert.ok(Date.parse(running.body.data.progress.updatedAt) > Date.parse(stale.updatedAt));
      // A newer row (an activity's own report) wins over the workflow's stage.
      const fresher = { progress: 0.2, updatedAt: new Date(Date.now() + 1_000).toISOString(), message: 'row is newer' };
      await db()('jobs')
        .where({ id })
        .update({ progress: JSON.stringify(fresher) });
      assert.deepEqual((await call('GET', `/v1/jobs/${id}`)).body.data.progress, fresher);
      assert.equal((await waitForJob(id)).status, 'DONE');
    });

    it("generates from a note of the same project, in the project's language by default", async () => {
      const { call, workspace } = await fresh();
      const fr = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'Claire', language: 'fr' });
      const note = await call('POST', '/v1/notes', {
        body: {
          projectId: fr.id,
          content: "Nous avons ouvert un bureau à Lyon. Toute l'équipe a participé au choix des locaux. Le café est excellent.",
          contentType: 'EDUCATIONAL',
        },
      });
      assert.equal(note.status, 200, JSON.stringify(note.body));
      const r = await call('POST', '/v1/posts/generations', {
        body: { projectId: fr.id, source: { type: 'note', noteId: note.body.data.id }, wait_for_completion_ms: 20_000 },
      });
      assert.equal(r.body.data.status, 'DONE', JSON.stringify(r.body));
      const [draft] = await draftsOf(r.body.data.id);
      assert.match(draft!.content, /Lyon/);
      // The note's slot type is the default content type; the project's language reaches the prompt.
      assert.equal(draft!.content_type, 'EDUCATIONAL');
      const prompt = JSON.stringify(h.stub.requests.at(-1)!.body);
      assert.match(prompt, /French \(fr\)/);
    });

    it('takes options.language and options.contentType over the defaults', async () => {
      const { call, project } = await fresh();
      const r = await call('POST', '/v1/posts/generations', {
        body: generationBody(project.id, { options: { language: 'de', contentType: 'BUSINESS_INTERNAL' }, wait_for_completion_ms: 20_000 }),
      });
      assert.equal(r.body.data.status, 'DONE');
      assert.equal((await draftsOf(r.body.data.id))[0]!.content_type, 'BUSINESS_INTERNAL');
      assert.match(JSON.stringify(h.stub.requests.at(-1)!.body), /German \(de\)/);
    });
  });

  describe('writer failures (spec 3.2 FAILED with errorCode)', () => {
    async function failWith(kind: LlmStubFailure, times: number) {
      const { call, project, workspace } = await fresh();
      h.stub.failNext(times, kind);
      const r = await call('POST', '/v1/posts/generations', { body: generationBody(project.id) });
      assert.equal(r.status, 200);
      await waitForJob(r.body.data.id, undefined, 40_000);
      const job = (await call('GET', `/v1/jobs/${r.body.data.id}`)).body.data;
      return { job, workspace, call };
    }

    it('fails at once with llm_auth_failed when the provider rejects the key (not retryable)', async () => {
      const { job, workspace } = await failWith('auth', 1);
      assert.equal(job.status, 'FAILED');
      assert.equal(job.errorCode, 'llm_auth_failed');
      assert.ok(job.errorMessage);
      assert.equal(job.attemptCount, 1);
      assert.equal(job.result, null);
      assert.equal(h.stub.requests.length, 1);
      assert.deepEqual(await draftsOf(job.id), []);
      const events = await db()('outbox_events')
        .where({ workspace_id: workspace.id, type: 'job.completed' })
        .andWhereRaw(`data->'job'->>'id' = ?`, [job.id]);
      assert.equal(events[0].data.job.status, 'FAILED');
      assert.equal(events[0].data.job.errorCode, 'llm_auth_failed');
      await recordIfAsked(job.id, 'failed-not-retryable');
    });

    it('fails with llm_bad_request and llm_empty_output without retrying', async () => {
      assert.equal((await failWith('bad_request', 1)).job.errorCode, 'llm_bad_request');
      const filtered = (await failWith('content_filter', 1)).job;
      assert.equal(filtered.errorCode, 'llm_empty_output');
      assert.equal(filtered.attemptCount, 1);
    });

    it('retries a server error and finishes DONE on the second attempt', async () => {
      const { job } = await failWith('server_error', 1);
      assert.equal(job.status, 'DONE');
      assert.equal(job.attemptCount, 2);
      assert.equal((await draftsOf(job.id)).length, 1);
      await recordIfAsked(job.id, 'retried-then-done');
    });

    it("gives up after the bounded attempts with the provider's last code", async () => {
      const { job } = await failWith('rate_limited', 4);
      assert.equal(job.status, 'FAILED');
      assert.equal(job.errorCode, 'llm_rate_limited');
      assert.equal(job.attemptCount, 4);
      assert.equal(h.stub.requests.length, 4);
      await recordIfAsked(job.id, 'failed-after-retries');
    });

    it('retries a garbled answer only once (lib/llm shouldRetry)', async () => {
      const { job } = await failWith('invalid_json', 3);
      assert.equal(job.status, 'FAILED');
      assert.equal(job.errorCode, 'llm_invalid_response');
      assert.equal(job.attemptCount, 2);
    });
  });

  describe('validation (spec 4.4, 7.2)', () => {
    let ctx: Awaited<ReturnType<typeof fresh>>;
    before(async () => {
      ctx = await fresh({ projects: 2 });
    });
    const post = (body: unknown) => ctx.call('POST', '/v1/posts/generations', { body });

    it('answers 400 invalid_request for a missing projectId or source field', async () => {
      assertError(await post({ source: { type: 'text', text: 'x' } }), 400, 'invalid_request');
      assertError(await post({ projectId: ctx.project.id }), 400, 'invalid_request');
      assertError(await post({ projectId: ctx.project.id, source: {} }), 400, 'invalid_request');
      assertError(await post({ projectId: ctx.project.id, source: { type: 'text' } }), 400, 'invalid_request');
      assertError(await post({ projectId: ctx.project.id, source: { type: 'note' } }), 400, 'invalid_request');
    });

    it('answers 413 for source.text over 100,000 characters and accepts exactly 100,000', async () => {
      const err = assertError(
        await post({ projectId: ctx.project.id, source: { type: 'text', text: 'a'.repeat(100_001) } }),
        413,
        'payload_too_large',
      );
      assert.match(err.message, /source\.text/);
      const ok = await post({ projectId: ctx.project.id, source: { type: 'text', text: `${'word '.repeat(19_999)}done.` } });
      assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 300));
    });

    it('answers 422 for a note of another project, or no such note', async () => {
      const other = await ctx.call('POST', '/v1/notes', { body: { projectId: ctx.projects[1]!.id, content: 'Elsewhere' } });
      assertError(await post({ projectId: ctx.project.id, source: { type: 'note', noteId: other.body.data.id } }), 422, 'unprocessable');
      assertError(await post({ projectId: ctx.project.id, source: { type: 'note', noteId: 'note_doesnotexist' } }), 422, 'unprocessable');
    });

    it('answers 422 for an idea of another project, or no such idea; 400 without ideaId (docs/ideas.md)', async () => {
      const err = assertError(await post({ projectId: ctx.project.id, source: { type: 'idea', ideaId: 'idea_x' } }), 422, 'unprocessable');
      assert.match(err.message, /idea/i);
      const other = await ctx.call('POST', '/v1/ideas', { body: { projectId: ctx.projects[1]!.id, title: 'Elsewhere' } });
      assert.equal(other.status, 200, JSON.stringify(other.body));
      const cross = assertError(
        await post({ projectId: ctx.project.id, source: { type: 'idea', ideaId: other.body.data.id } }),
        422,
        'unprocessable',
      );
      assert.match(cross.message, /same project/);
      assertError(await post({ projectId: ctx.project.id, source: { type: 'idea' } }), 400, 'invalid_request');
      assertError(
        await post({ projectId: ctx.project.id, source: { type: 'idea', ideaId: other.body.data.id, text: 'x' } }),
        422,
        'unprocessable',
      );
    });

    it('answers 422 for bad shapes: unknown source type, stray fields, bad enum, long language, past or bare-date scheduledFor, non-integer wait', async () => {
      const p = ctx.project.id;
      const text = { type: 'text', text: 'Hello there, this is a post.' };
      assertError(await post({ projectId: p, source: { type: 'video', url: 'x' } }), 422, 'unprocessable');
      assertError(await post({ projectId: p, source: { ...text, noteId: 'note_x' } }), 422, 'unprocessable');
      assertError(await post({ projectId: p, source: text, tone: 'upbeat' }), 422, 'unprocessable');
      assertError(await post({ projectId: p, source: text, options: { contentType: 'NEWS' } }), 422, 'unprocessable');
      assertError(await post({ projectId: p, source: text, options: { language: 'x'.repeat(17) } }), 422, 'unprocessable');
      assertError(
        await post({ projectId: p, source: text, scheduledFor: new Date(Date.now() - 60_000).toISOString() }),
        422,
        'unprocessable',
      );
      assertError(await post({ projectId: p, source: text, scheduledFor: '2030-01-01' }), 422, 'unprocessable');
      assertError(await post({ projectId: p, source: text, wait_for_completion_ms: 1.5 }), 422, 'unprocessable');
      assertError(await post({ projectId: p, source: { type: 'text', text: '   ' } }), 422, 'unprocessable');
      assert.equal(
        await db()('jobs').where({ project_id: p, status: 'QUEUED' }).whereRaw(`input->>'sourceText' = ?`, [text.text]).first(),
        undefined,
      );
    });

    it('answers 404 for a project of another workspace', async () => {
      const other = await workspaceWithKey();
      assertError(await post(generationBody(other.project.id)), 404, 'not_found');
    });

    it('treats a negative wait as no wait', async () => {
      const r = await post(generationBody(ctx.project.id, { wait_for_completion_ms: -10 }));
      assert.equal(r.status, 200);
      assert.equal(r.body.data.status, 'QUEUED');
    });
  });

  describe('scopes (spec 4.1 "posts:write (see 4.4)", 4.9 generate_post)', () => {
    it("REST needs posts:write alone: posts:generate (the agent tool's scope) and a read-only key are refused naming posts:write", async () => {
      const { workspace, project } = await fresh();
      const writer = await issueApiKey({ workspaceId: workspace.id, scopes: ['posts:write'] });
      const r = await client(h.api.url, writer.key)('POST', '/v1/posts/generations', { body: generationBody(project.id) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      for (const scopes of [['posts:generate'], ['posts:read', 'workspace:read']]) {
        const key = await issueApiKey({ workspaceId: workspace.id, scopes });
        const err = assertError(
          await client(h.api.url, key.key)('POST', '/v1/posts/generations', { body: generationBody(project.id) }),
          403,
          'scope_missing',
        );
        // spec 7.2: a single named scope is missing, so details.required_scope names it.
        assert.deepEqual(err.details, { required_scope: 'posts:write' }, String(scopes));
      }
      assert.equal(
        Number((await db()('jobs').where({ workspace_id: workspace.id }).count<{ n: string }[]>({ n: '*' }))[0]!.n),
        1,
        'only the posts:write call queued a job',
      );
    });
  });

  describe('idempotency (spec 8)', () => {
    it('replays the same job for the same key and body, reserving spend once', async () => {
      const { call, project, workspace } = await fresh();
      const key = uniqueKey();
      const body = generationBody(project.id);
      const first = await call('POST', '/v1/posts/generations', { body, headers: { 'Idempotency-Key': key } });
      const second = await call('POST', '/v1/posts/generations', { body, headers: { 'Idempotency-Key': key } });
      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(second.body.data.id, first.body.data.id);
      assert.equal(
        await db()('jobs')
          .where({ workspace_id: workspace.id })
          .count('* as n')
          .first()
          .then((r) => Number(r!.n)),
        1,
      );
      const day = await db()('ai_spend_days').where({ workspace_id: workspace.id }).first();
      assert.equal(day.spent_cents + day.reserved_cents <= 5, true, 'one reservation at most');
      const conflict = await call('POST', '/v1/posts/generations', {
        body: { ...body, options: { language: 'fr' } },
        headers: { 'Idempotency-Key': key },
      });
      assertError(conflict, 409, 'idempotency_key_conflict');
      await waitForJob(first.body.data.id);
      assert.equal((await draftsOf(first.body.data.id)).length, 1);
    });
  });

  it('settles the reservation with the real cost once the job is done', async () => {
    const { call, project, workspace } = await fresh();
    // 20,000 prompt tokens at 15 hundredths of a cent per 1,000 = 3 cents.
    h.stub.setUsage({ prompt_tokens: 20_000, completion_tokens: 0 });
    const r = await call('POST', '/v1/posts/generations', { body: generationBody(project.id) });
    const during = await db()('ai_spend_days').where({ workspace_id: workspace.id }).first();
    assert.equal(during.reserved_cents + during.spent_cents, 5);
    await waitForJob(r.body.data.id);
    // Settlement follows the DONE commit (finishingJob): wait for it rather than race it.
    await waitFor(async () => (await db()('jobs').where({ id: r.body.data.id }).first('spend_settled_at')).spend_settled_at, 10_000);
    const after = await db()('ai_spend_days').where({ workspace_id: workspace.id }).first();
    assert.deepEqual({ spent: after.spent_cents, reserved: after.reserved_cents }, { spent: 3, reserved: 0 });
    const week = await db()('ai_budget_weeks').where({ workspace_id: workspace.id, budget_key: project.id }).first();
    assert.deepEqual({ spent: week.spent_cents, reserved: week.reserved_cents }, { spent: 3, reserved: 0 });
  });
});
