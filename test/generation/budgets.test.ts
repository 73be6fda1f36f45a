import assert from 'node:assert/strict';
import { createProject, issueApiKey } from '../../admin/provision';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { weekStartUtc } from '../../lib/time';
import { client } from '../support/app';
import { finishingJob, finishJob } from '../../lib/jobs/finish';
import { progressNow } from '../../lib/jobs/row';
import { queuedPostGeneration, workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { generationBody, useHarness, waitForJob } from './support';
import { withRecordedStatements } from '../../bench/harness/statements';

// spec 2.16 GET /v1/usage and the two refusals in front of a generation (spec 7.2, 8): the
// weekly AI budget under `block` and the daily API AI-spend cap. Usage must agree beforehand:
// canGenerate false exactly when the next generation is refused, with blockedBy naming why.

// 20,000 prompt tokens at the default 15 hundredths of a cent per 1,000 tokens: 3 cents a job.
const THREE_CENTS = { prompt_tokens: 20_000, completion_tokens: 0 };

describe('AI budgets, spend cap and GET /v1/usage', function () {
  this.timeout(90_000);
  const h = useHarness();

  async function fresh(
    settings: { weekly_ai_budget_cents?: number | null; daily_spend_cap_cents?: number | null; ai_enforcement?: string } = {},
    plan = 'BUSINESS',
  ) {
    const ws = await workspaceWithKey({ plan });
    if (Object.keys(settings).length) await db()('workspaces').where({ id: ws.workspace.id }).update(settings);
    return { ...ws, call: client(h.api.url, ws.key) };
  }
  const usage = async (call: ReturnType<typeof client>, projectId?: string) => {
    const r = await call('GET', `/v1/usage${projectId ? `?projectId=${projectId}` : ''}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data;
  };

  it('reports the full usage shape for the pool and for a project', async () => {
    const { call, project } = await fresh();
    const today = new Date().toISOString().slice(0, 10);
    const weekStart = weekStartUtc(new Date()).toISOString().slice(0, 10);
    const business = config.plans.BUSINESS;
    const pool = await usage(call);
    assert.deepEqual(pool, {
      plan: 'BUSINESS',
      canGenerate: true,
      blockedBy: null,
      ai: {
        scope: 'ai_workspace_pool',
        percentUsed: 0,
        unlimited: false,
        enforcement: 'block',
        weekStart,
        resetsAt: new Date(Date.parse(`${weekStart}T00:00:00Z`) + 7 * 86_400_000).toISOString(),
        project: null,
        workspacePool: { percentUsed: 0, unlimited: false },
      },
      storage: { usedBytes: 0, limitBytes: business.storageLimitBytes, percentUsed: 0, usedAssets: 0, assetLimit: business.assetLimit },
      apiSpend: { bucketDate: today, capCents: business.dailySpendCapCents, spentCents: 0, remainingCents: business.dailySpendCapCents },
    });
    const forProject = await usage(call, project.id);
    assert.equal(forProject.ai.scope, 'ai_project');
    assert.deepEqual(forProject.ai.project, { id: project.id, name: project.display_name, percentUsed: 0, unlimited: false });
    assert.equal(new Date(forProject.ai.resetsAt).getUTCDay(), 1, 'resets on a Monday');
    assert.equal(forProject.ai.resetsAt.slice(11), '00:00:00.000Z');
  });

  it("reads the project's and the pool's budgets, weeks, the day and storage apart, in one statement after the project", async () => {
    const { call, workspace, project } = await fresh({ daily_spend_cap_cents: 100 });
    const week = weekStartUtc(new Date()).toISOString().slice(0, 10);
    const day = new Date().toISOString().slice(0, 10);
    const ws = workspace.id;
    await db()('ai_budgets').insert([
      { workspace_id: ws, budget_key: project.id, weekly_budget_cents: 200 },
      { workspace_id: ws, budget_key: 'pool', weekly_budget_cents: 1000 },
    ]);
    await db()('ai_budget_weeks').insert([
      { workspace_id: ws, budget_key: project.id, week_start: week, spent_cents: 30, reserved_cents: 20 },
      { workspace_id: ws, budget_key: 'pool', week_start: week, spent_cents: 390, reserved_cents: 10 },
    ]);
    await db()('ai_spend_days').insert({ workspace_id: ws, bucket_date: day, spent_cents: 17, reserved_cents: 3 });
    await db()('workspace_storage').insert({ workspace_id: ws, used_bytes: 4096, used_assets: 2 });

    // Statements sent while the request is answered (the key's authentication is cached by then).
    const sent = async (projectId?: string) => {
      const { result: body, statements } = await withRecordedStatements(() => usage(call, projectId));
      return { body, statements: statements.length };
    };
    await usage(call);
    const pool = await sent();
    const forProject = await sent(project.id);
    assert.equal(pool.statements, 1, 'the pool: one statement');
    assert.equal(forProject.statements, 2, "a project: its lookup, then the meters' one statement");

    // 390 spent + 10 reserved of the pool's 1000.
    assert.deepEqual(pool.body.ai.workspacePool, { percentUsed: 40, unlimited: false });
    assert.equal(pool.body.ai.percentUsed, 40);
    assert.deepEqual(forProject.body.ai.project, { id: project.id, name: project.display_name, percentUsed: 25, unlimited: false });
    assert.deepEqual(forProject.body.ai.workspacePool, { percentUsed: 40, unlimited: false });
    // 30 spent + 20 reserved of the project's 200.
    assert.equal(forProject.body.ai.percentUsed, 25);
    await db()('ai_budget_weeks').where({ workspace_id: ws, budget_key: project.id }).update({ spent_cents: 150 });
    assert.equal((await usage(call, project.id)).ai.percentUsed, 85);
    for (const u of [pool.body, forProject.body]) {
      assert.deepEqual(u.apiSpend, { bucketDate: day, capCents: 100, spentCents: 20, remainingCents: 80 });
      assert.equal(u.storage.usedBytes, 4096);
      assert.equal(u.storage.usedAssets, 2);
    }
  });

  it('reports unlimited plans as unlimited with 0 %', async () => {
    const { call } = await fresh({}, 'ENTERPRISE');
    const u = await usage(call);
    assert.equal(u.plan, 'ENTERPRISE');
    assert.deepEqual(u.ai.workspacePool, { percentUsed: 0, unlimited: true });
    assert.equal(u.ai.unlimited, true);
    assert.deepEqual(u.apiSpend.capCents, null);
    assert.deepEqual(u.apiSpend.remainingCents, null);
    assert.equal(u.storage.limitBytes, null);
    assert.equal(u.storage.assetLimit, null);
  });

  it('answers 404 for a project of another workspace, 403 without workspace:read', async () => {
    const { call, workspace } = await fresh();
    const other = await workspaceWithKey();
    assertError(await call('GET', `/v1/usage?projectId=${other.project.id}`), 404, 'not_found');
    const key = await issueApiKey({ workspaceId: workspace.id, scopes: ['posts:write'] });
    assertError(await client(h.api.url, key.key)('GET', '/v1/usage'), 403, 'scope_missing');
    assertError(await call('GET', '/v1/usage?month=3'), 400, 'invalid_request');
  });

  describe('weekly AI budget', () => {
    it('refuses under `block` once the project budget is used up, and /v1/usage says so first', async () => {
      const { call, project, workspace } = await fresh({ weekly_ai_budget_cents: 3 });
      h.stub.setUsage(THREE_CENTS);
      assert.equal((await usage(call, project.id)).canGenerate, true);
      const first = await call('POST', '/v1/posts/generations', { body: generationBody(project.id, { wait_for_completion_ms: 20_000 }) });
      assert.equal(first.body.data.status, 'DONE', JSON.stringify(first.body));

      const u = await usage(call, project.id);
      assert.equal(u.canGenerate, false);
      assert.equal(u.blockedBy, 'weekly_ai_budget');
      assert.equal(u.ai.scope, 'ai_project');
      assert.equal(u.ai.percentUsed, 100);
      assert.equal(u.ai.project.percentUsed, 100);
      assert.equal(u.ai.workspacePool.percentUsed, 0, 'a personal project does not draw from the pool');

      const jobsBefore = await db()('jobs').where({ workspace_id: workspace.id }).count('* as n').first();
      const err = assertError(
        await call('POST', '/v1/posts/generations', { body: generationBody(project.id) }),
        402,
        'usage_limit_exceeded',
      );
      assert.deepEqual(err.details, { scope: 'ai_project', percentUsed: 100, resetsAt: u.ai.resetsAt, projectId: project.id });
      const jobsAfter = await db()('jobs').where({ workspace_id: workspace.id }).count('* as n').first();
      assert.equal(Number(jobsAfter!.n), Number(jobsBefore!.n), 'a refusal queues nothing');

      // Another project of the workspace has its own budget; the pool is untouched.
      const second = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'Second person' });
      assert.equal((await usage(call, second.id)).canGenerate, true);
      assert.equal((await call('POST', '/v1/posts/generations', { body: generationBody(second.id) })).status, 200);
    });

    it('never refuses under off, shadow or warn, even at 100 %', async () => {
      const { call, project, workspace } = await fresh({ weekly_ai_budget_cents: 3 });
      h.stub.setUsage(THREE_CENTS);
      await call('POST', '/v1/posts/generations', { body: generationBody(project.id, { wait_for_completion_ms: 20_000 }) });
      for (const mode of ['warn', 'shadow', 'off']) {
        await db()('workspaces').where({ id: workspace.id }).update({ ai_enforcement: mode });
        const u = await usage(call, project.id);
        assert.equal(u.ai.enforcement, mode);
        assert.ok(u.ai.percentUsed >= 100);
        assert.equal(u.canGenerate, true, mode);
        assert.equal(u.blockedBy, null);
        const r = await call('POST', '/v1/posts/generations', { body: generationBody(project.id, { wait_for_completion_ms: 20_000 }) });
        assert.equal(r.status, 200, `${mode}: ${JSON.stringify(r.body)}`);
      }
    });

    it('charges company pages to the shared workspace pool', async () => {
      const { call, workspace, project } = await fresh({ weekly_ai_budget_cents: 3 });
      const pageA = await createProject({ workspaceId: workspace.id, type: 'COMPANY_PAGE', name: 'Acme Inc' });
      const pageB = await createProject({ workspaceId: workspace.id, type: 'COMPANY_PAGE', name: 'Acme Labs' });
      h.stub.setUsage(THREE_CENTS);
      const done = await call('POST', '/v1/posts/generations', { body: generationBody(pageA.id, { wait_for_completion_ms: 20_000 }) });
      assert.equal(done.body.data.status, 'DONE');
      // spec 4.4: a company page writes as the organization by default.
      const post = await call('GET', `/v1/posts/${done.body.data.result.postId}`);
      assert.equal(post.body.data.contentType, 'BUSINESS_EXTERNAL');

      const u = await usage(call, pageB.id);
      assert.equal(u.ai.scope, 'ai_workspace_pool');
      assert.deepEqual(u.ai.project, { id: pageB.id, name: 'Acme Labs', percentUsed: 100, unlimited: false });
      assert.equal(u.ai.workspacePool.percentUsed, 100);
      assert.equal(u.canGenerate, false);
      assert.equal(u.blockedBy, 'weekly_ai_budget');
      assert.equal((await usage(call)).canGenerate, false, 'without projectId the answer covers the pool');
      const err = assertError(await call('POST', '/v1/posts/generations', { body: generationBody(pageB.id) }), 402, 'usage_limit_exceeded');
      assert.equal(err.details!.scope, 'ai_workspace_pool');
      assert.equal(err.details!.projectId, undefined);
      // Personal projects keep their own budgets.
      assert.equal((await usage(call, project.id)).canGenerate, true);
    });
    it('an operator-set project budget refuses image generation as it refuses post generation', async () => {
      const { call, project, workspace } = await fresh();
      await db()('ai_budgets').insert({ workspace_id: workspace.id, budget_key: project.id, weekly_budget_cents: 0 });
      const body = { projectId: project.id, prompt: 'A quote card' };
      const jobsBefore = await db()('jobs').where({ workspace_id: workspace.id }).count('* as n').first();
      const err = assertError(await call('POST', '/v1/media/generations', { body }), 402, 'usage_limit_exceeded');
      assert.equal(err.details!.scope, 'ai_project');
      assert.equal(err.details!.projectId, project.id);
      assertError(await call('POST', '/v1/posts/generations', { body: generationBody(project.id) }), 402, 'usage_limit_exceeded');
      const jobsAfter = await db()('jobs').where({ workspace_id: workspace.id }).count('* as n').first();
      assert.equal(Number(jobsAfter!.n), Number(jobsBefore!.n), 'a refusal queues nothing');
    });
  });

  describe('daily API AI-spend cap', () => {
    it('refuses with 402 spend_cap_exceeded once spent plus the estimate would pass the cap, and /v1/usage agrees first', async () => {
      const { call, project, workspace } = await fresh({ daily_spend_cap_cents: 7 });
      h.stub.setUsage(THREE_CENTS);
      const before = await usage(call, project.id);
      assert.equal(before.canGenerate, true);
      assert.deepEqual(before.apiSpend, {
        bucketDate: new Date().toISOString().slice(0, 10),
        capCents: 7,
        spentCents: 0,
        remainingCents: 7,
      });

      const done = await call('POST', '/v1/posts/generations', { body: generationBody(project.id, { wait_for_completion_ms: 20_000 }) });
      assert.equal(done.body.data.status, 'DONE');
      const u = await usage(call, project.id);
      assert.deepEqual(u.apiSpend, { bucketDate: before.apiSpend.bucketDate, capCents: 7, spentCents: 3, remainingCents: 4 });
      assert.equal(u.canGenerate, false, '3 spent + 5 reserved would exceed 7');
      assert.equal(u.blockedBy, 'daily_api_spend_cap');

      const err = assertError(await call('POST', '/v1/posts/generations', { body: generationBody(project.id) }), 402, 'spend_cap_exceeded');
      assert.deepEqual(err.details, { ...u.apiSpend, estimateCents: config.llm.reserveCents });
      assert.equal(Number((await db()('jobs').where({ workspace_id: workspace.id }).count('* as n').first())!.n), 1);
    });

    it('reserves atomically: concurrent requests never take more than the cap allows', async () => {
      const { call, project, workspace } = await fresh({ daily_spend_cap_cents: 12 });
      // The jobs stay in flight during the burst, so only reservations count.
      h.stub.setLatency(3_000);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => call('POST', '/v1/posts/generations', { body: generationBody(project.id) })),
      );
      const accepted = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 402);
      assert.equal(accepted.length, 2, answers.map((a) => a.status).join(','));
      assert.equal(refused.length, 6);
      for (const r of refused) assert.equal(r.body.error.code, 'spend_cap_exceeded');
      const day = await db()('ai_spend_days').where({ workspace_id: workspace.id }).first();
      assert.equal(day.reserved_cents, 10);
      const during = await usage(call);
      assert.equal(during.apiSpend.spentCents, 10, 'reservations in flight count as spent');
      assert.equal(during.canGenerate, false);
      for (const a of accepted) assert.equal((await waitForJob(a.body.data.id)).status, 'DONE');
      const settled = await db()('ai_spend_days').where({ workspace_id: workspace.id }).first();
      assert.equal(settled.reserved_cents, 0);
      assert.ok(settled.spent_cents >= 2 && settled.spent_cents < 10, `real cost ${settled.spent_cents}`);
      assert.equal((await usage(call)).canGenerate, true, 'the real cost left room again');
    });

    it('blocks on the weekly budget first when both would refuse', async () => {
      const { call, project } = await fresh({ daily_spend_cap_cents: 7, weekly_ai_budget_cents: 3 });
      h.stub.setUsage(THREE_CENTS);
      await call('POST', '/v1/posts/generations', { body: generationBody(project.id, { wait_for_completion_ms: 20_000 }) });
      const u = await usage(call, project.id);
      assert.equal(u.blockedBy, 'weekly_ai_budget');
      assertError(await call('POST', '/v1/posts/generations', { body: generationBody(project.id) }), 402, 'usage_limit_exceeded');
    });
  });
});

// docs/generation.md "Spend and budgets": the settlement is the last statement of the
// transaction that ends the job, so no reader ever sees the job final with its reservation still
// on the meters. A settlement that fails takes the job's end back with it.
describe('a job ends and is settled in one transaction', () => {
  it('a settlement that fails leaves the job as it was; once it can, the job ends settled', async () => {
    const ws = await workspaceWithKey({ plan: 'BUSINESS' });
    const job = await queuedPostGeneration(ws);
    const reserved = await db()('ai_spend_days').where({ workspace_id: ws.workspace.id }).first('reserved_cents', 'spent_cents');
    assert.ok(reserved.reserved_cents > 0, 'the job holds a reservation');
    const end = () =>
      finishingJob(db(), job.id, (trx) => finishJob(trx, job.id, { status: 'DONE', progress: progressNow(1, 'Done'), costCents: 2 }));
    const fn = `test_refuse_settle_${ws.workspace.id.replace(/\W/g, '_')}`;
    await db().raw(`create function ${fn}() returns trigger language plpgsql as $$ begin raise exception 'meters unavailable'; end $$`);
    await db().raw(
      `create trigger ${fn} before update on ai_spend_days for each row when (new.workspace_id = '${ws.workspace.id}') execute function ${fn}()`,
    );
    try {
      await assert.rejects(end(), /meters unavailable/);
    } finally {
      await db().raw(`drop trigger ${fn} on ai_spend_days`);
      await db().raw(`drop function ${fn}()`);
    }
    const after = await db()('jobs').where({ id: job.id }).first('status', 'spend_settled_at');
    assert.deepEqual(after, { status: 'QUEUED', spend_settled_at: null }, 'the end went back with the settlement');

    await end();
    const ended = await db()('jobs').where({ id: job.id }).first('status', 'spend_settled_at');
    assert.equal(ended.status, 'DONE');
    assert.ok(ended.spend_settled_at, 'settled with its end');
    assert.deepEqual(await db()('ai_spend_days').where({ workspace_id: ws.workspace.id }).first('reserved_cents', 'spent_cents'), {
      reserved_cents: 0,
      spent_cents: reserved.spent_cents + 2,
    });
  });
});
