// Operator commands for running the service without a dashboard (issue 12): each is run as
// operators run it (a separate bin/admin process) and its effect is read back through the API.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBase62 } from '../../lib/ids';
import { workflowIds } from '../../lib/temporal/client';
import { client, useApi } from '../support/app';
import { maybeRecordHistory } from '../support/histories';
import { connectedPersonalProject, simulator } from '../support/network';
import { useTestWorker } from '../support/worker';
import { admin, assertHelpLists, fails, ok, unique } from '../support/admin';

describe('operator commands (bin/admin, issue 12)', function () {
  this.timeout(300_000);

  const api = useApi();

  async function workspaceWithKey(plan = 'BUSINESS') {
    const w = await ok(['workspace', 'create', '--name', `Ops ${unique()}`, '--plan', plan]);
    const k = await ok(['key', 'create', '--workspace', w.id, '--scopes', 'read,write']);
    return { w, call: client(api.url, k.key) };
  }

  it('help lists every new command', async () => {
    await assertHelpLists([
      'member remove',
      'member add-many',
      'project archive',
      'connection revoke',
      'connection clear-tokens',
      'connection check',
      'workspace set-ai-budget',
      'workspace set-spend-cap',
      'workspace set-review',
      'budget set',
      'budget show',
      'oauth token',
      'jobs pause',
      'jobs resume',
      'llm fail',
      'llm latency',
      'note create',
      'post create',
    ]);
    assert.match((await admin(['key', 'create', '--help'])).stdout, /--empty-scopes/);
  });

  it('removes a member; a second removal and an unknown user fail with one line', async () => {
    const { w, call } = await workspaceWithKey();
    const email = `gone.${unique()}@example.com`;
    await ok(['user', 'create', '--email', email]);
    await ok(['member', 'add', '--workspace', w.id, '--user', email, '--role', 'Member']);
    const removed = await ok(['member', 'remove', '--workspace', w.id, '--user', email]);
    assert.deepEqual([removed.email, removed.role, removed.removed], [email, 'personal_brand', true]);
    assert.deepEqual(await ok(['member', 'list', '--workspace', w.id]), []);
    const team = await call('GET', '/v1/team');
    assert.equal(team.status, 200, JSON.stringify(team.body));
    assert.ok(!JSON.stringify(team.body).includes(email), 'the team no longer lists the member');
    await fails(['member', 'remove', '--workspace', w.id, '--user', email], 1, /is not a member of workspace/);
    await fails(['member', 'remove', '--workspace', w.id, '--user', 'nobody@example.com'], 1, /no user nobody@example.com/);
    await fails(['member', 'remove', '--workspace', w.id], 2, /missing --user/);
  });

  it('adds a 100-member roster in one command within seconds, and a roster file', async () => {
    const w = await ok(['workspace', 'create', '--name', `Roster ${unique()}`, '--plan', 'BUSINESS']);
    const started = Date.now();
    const many = await ok(['member', 'add-many', '--workspace', w.id, '--count', '100', '--role', 'Client']);
    const took = Date.now() - started;
    assert.equal(many.added, 100);
    assert.equal(many.createdUsers, 100);
    assert.equal(many.members.length, 100);
    assert.ok(many.members.every((m: any) => m.roleLabel === 'Client'));
    // One process, a few multi-row statements: seconds even on a loaded machine.
    assert.ok(took < 15_000, `100 members took ${took} ms`);
    assert.equal((await ok(['member', 'list', '--workspace', w.id])).length, 100);

    const existing = `known.${unique()}@example.com`;
    await ok(['user', 'create', '--email', existing]);
    const file = path.join(os.tmpdir(), `roster-${randomBase62(8)}.csv`);
    await fs.writeFile(file, `email,role,name\n${existing},Admin\n\n# a comment\nNew.${unique()}@Example.com,,Ann Lee\n`);
    try {
      const r = await ok(['member', 'add-many', '--workspace', w.id, '--file', file]);
      assert.deepEqual([r.added, r.createdUsers], [2, 1]);
      const byEmail = new Map(r.members.map((m: any) => [m.email, m]));
      assert.equal((byEmail.get(existing) as any).roleLabel, 'Admin');
      const fresh = r.members.find((m: any) => m.email !== existing);
      assert.deepEqual([fresh.roleLabel, fresh.name], ['Member', 'Ann Lee']);
      assert.match(fresh.email, /^new\./, 'emails are stored lower-case');
    } finally {
      await fs.rm(file, { force: true });
    }
    await fails(['member', 'add-many', '--workspace', w.id], 2, /give --count N or --file PATH/);
    await fails(['member', 'add-many', '--workspace', w.id, '--count', 'ten'], 2, /--count must be a whole number/);
    await fails(['member', 'add-many', '--workspace', w.id, '--count', '3', '--role', 'Owner'], 1, /unknown role "Owner"/);
    await fails(['member', 'add-many', '--workspace', w.id, '--file', '/nonexistent/roster.csv'], 2, /cannot read --file/);
  });

  it('archives a project: the API stops returning it', async () => {
    const { w, call } = await workspaceWithKey();
    const p = await ok(['project', 'create', '--workspace', w.id, '--type', 'PERSONAL_BRAND', '--name', 'Archived One']);
    assert.equal((await call('GET', `/v1/projects/${p.id}`)).status, 200);
    const archived = await ok(['project', 'archive', '--workspace', w.id, '--project', p.id]);
    assert.deepEqual([archived.status, archived.alreadyArchived], ['ARCHIVED', false]);
    const gone = await call('GET', `/v1/projects/${p.id}`);
    assert.equal(gone.status, 404, JSON.stringify(gone.body));
    const list = await call('GET', '/v1/projects');
    assert.ok(!list.body.data.some((x: any) => x.id === p.id));
    assert.equal((await ok(['project', 'archive', '--workspace', w.id, '--project', p.id])).alreadyArchived, true);
    await fails(['project', 'archive', '--workspace', w.id, '--project', 'proj_missing'], 1, /no project proj_missing/);
  });

  it('sets a connection revoked, or clears its tokens, as the API then reports', async () => {
    const { w, call } = await workspaceWithKey();
    const a = await ok(['project', 'create', '--workspace', w.id, '--type', 'PERSONAL_BRAND', '--name', 'Rev']);
    const b = await ok(['project', 'create', '--workspace', w.id, '--type', 'AMPLIFIER', '--name', 'Clear']);
    const revoked = await ok(['connection', 'revoke', '--workspace', w.id, '--project', a.id]);
    assert.equal(revoked.connection_status, 'REVOKED');
    const ra = await call('GET', `/v1/projects/${a.id}`);
    assert.deepEqual([ra.body.data.network.state, ra.body.data.network.canPublish], ['revoked', false]);
    await ok(['connection', 'clear-tokens', '--workspace', w.id, '--project', b.id]);
    const rb = await call('GET', `/v1/projects/${b.id}`);
    assert.equal(rb.body.data.network.state, 'disconnected');
    const page = await ok(['project', 'create', '--workspace', w.id, '--type', 'COMPANY_PAGE', '--name', 'Page', '--connection', 'none']);
    await fails(['connection', 'revoke', '--workspace', w.id, '--project', page.id], 1, /has no connection/);
    await fails(['connection', 'clear-tokens', '--workspace', w.id, '--project', 'proj_missing'], 1, /no project proj_missing/);
  });

  describe('connection check (health workflow)', () => {
    const taskQueue = `admin-health-${randomBase62(8)}`;
    useTestWorker({ taskQueue });

    it('signals the workflow, waits for the check and prints its outcome', async () => {
      const w = await ok(['workspace', 'create', '--name', `Health ${unique()}`, '--plan', 'BUSINESS']);
      const { project, token } = await connectedPersonalProject(w.id);
      const env = { TEMPORAL_TASK_QUEUE: taskQueue };
      const good = await ok(['connection', 'check', '--workspace', w.id, '--project', project.id], { env });
      assert.deepEqual([good.result, good.ok, good.failures], ['ok', true, 0]);
      assert.equal(good.connection.connection_status, 'CONNECTED');

      await simulator().revokeToken({ token: token.accessToken });
      const bad = await ok(['connection', 'check', '--workspace', w.id, '--project', project.id], { env });
      assert.deepEqual([bad.result, bad.ok, bad.failures], ['failed', false, 1]);
      assert.equal(bad.connection.consecutive_failures, 1);
      assert.equal(bad.connection.connection_status, 'DEGRADED');
      // Signals carrying a request id, and the lastCheck query, for the replay corpus.
      await maybeRecordHistory(workflowIds.connectionHealth(project.id), 'connectionHealth-check-now-requests');

      // A project whose workflow is not running, started on a queue no worker serves: a clear
      // failure instead of a hang.
      const other = await connectedPersonalProject(w.id);
      await fails(
        ['connection', 'check', '--workspace', w.id, '--project', other.project.id, '--timeout-ms', '1500'],
        1,
        /no check result within 1500 ms/,
        { env: { TEMPORAL_TASK_QUEUE: `nobody-${randomBase62(6)}` } },
      );
    });
  });

  it('sets the weekly AI budget and enforcement, the daily spend cap and the review gate', async () => {
    const { w, call } = await workspaceWithKey();
    const budget = await ok(['workspace', 'set-ai-budget', '--workspace', w.id, '--weekly-cents', '0', '--enforcement', 'warn']);
    assert.deepEqual([budget.weeklyAiBudgetCents, budget.aiEnforcement], [0, 'warn']);
    let usage = await call('GET', '/v1/usage');
    assert.equal(usage.status, 200, JSON.stringify(usage.body));
    assert.equal(usage.body.data.ai.enforcement, 'warn');
    assert.equal(usage.body.data.ai.unlimited, false);
    assert.equal(usage.body.data.canGenerate, true, 'warn never refuses');
    await ok(['workspace', 'set-ai-budget', '--workspace', w.id, '--enforcement', 'block']);
    usage = await call('GET', '/v1/usage');
    assert.deepEqual([usage.body.data.canGenerate, usage.body.data.blockedBy], [false, 'weekly_ai_budget']);
    const back = await ok(['workspace', 'set-ai-budget', '--workspace', w.id, '--plan-default']);
    assert.equal(back.weeklyAiBudgetCents, null);

    const cap = await ok(['workspace', 'set-spend-cap', '--workspace', w.id, '--daily-cents', '0']);
    assert.equal(cap.dailySpendCapCents, 0);
    usage = await call('GET', '/v1/usage');
    assert.deepEqual([usage.body.data.canGenerate, usage.body.data.blockedBy], [false, 'daily_api_spend_cap']);
    await ok(['workspace', 'set-spend-cap', '--workspace', w.id, '--plan-default']);
    assert.equal((await call('GET', '/v1/usage')).body.data.canGenerate, true);

    const on = await ok(['workspace', 'set-review', '--workspace', w.id, '--required', 'on']);
    assert.equal(on.requireReviewWorkflow, true);
    assert.equal((await call('GET', '/v1/workspaces/context')).body.data.requireReviewWorkflow, true);
    await ok(['workspace', 'set-review', '--workspace', w.id, '--required', 'off']);
    assert.equal((await call('GET', '/v1/workspaces/context')).body.data.requireReviewWorkflow, false);

    await fails(['workspace', 'set-ai-budget', '--workspace', w.id], 2, /give --weekly-cents, --plan-default or --enforcement/);
    await fails(
      ['workspace', 'set-ai-budget', '--workspace', w.id, '--enforcement', 'loud'],
      2,
      /--enforcement must be one of off, shadow, warn, block/,
    );
    await fails(['workspace', 'set-spend-cap', '--workspace', w.id, '--daily-cents', '-5'], 2, /--daily-cents must be a whole number/);
    await fails(['workspace', 'set-review', '--workspace', w.id, '--required', 'maybe'], 2, /--required must be one of on, off/);
    await fails(['workspace', 'set-spend-cap', '--workspace', 'org_missing', '--daily-cents', '5'], 1, /no workspace org_missing/);
  });

  it('sets the weekly AI budget of one project and of the pool; generation and usage follow it', async () => {
    const { w, call } = await workspaceWithKey();
    await ok(['workspace', 'set-ai-budget', '--workspace', w.id, '--enforcement', 'block']);
    const p1 = await ok(['project', 'create', '--workspace', w.id, '--type', 'PERSONAL_BRAND', '--name', 'Budgeted']);
    const p2 = await ok(['project', 'create', '--workspace', w.id, '--type', 'AMPLIFIER', '--name', 'Free']);
    const page = await ok([
      'project',
      'create',
      '--workspace',
      w.id,
      '--type',
      'COMPANY_PAGE',
      '--name',
      'Page',
      '--linked-project',
      p1.id,
    ]);
    const set = await ok(['budget', 'set', '--workspace', w.id, '--project', p1.id, '--weekly-cents', '0']);
    const byTarget = new Map(set.targets.map((t: any) => [t.target, t]));
    assert.deepEqual([(byTarget.get(p1.id) as any).ownBudgetCents, (byTarget.get(p1.id) as any).weeklyBudgetCents], [0, 0]);
    assert.equal((byTarget.get(p2.id) as any).ownBudgetCents, null);
    assert.equal(set.enforcement, 'block');

    const u1 = await call('GET', `/v1/usage?projectId=${p1.id}`);
    assert.deepEqual([u1.body.data.canGenerate, u1.body.data.blockedBy], [false, 'weekly_ai_budget']);
    assert.equal((await call('GET', `/v1/usage?projectId=${p2.id}`)).body.data.canGenerate, true);
    const source = { type: 'text', text: 'Budgets are set per project; this one has none left for the week.' };
    const refused = await call('POST', '/v1/posts/generations', { body: { projectId: p1.id, source } });
    assert.equal(refused.status, 402, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'usage_limit_exceeded');
    const queued = await call('POST', '/v1/posts/generations', { body: { projectId: p2.id, source } });
    assert.equal(queued.status, 200, JSON.stringify(queued.body));

    await ok(['budget', 'set', '--workspace', w.id, '--pool', '--weekly-cents', '0']);
    const pool = await call('GET', `/v1/usage?projectId=${page.id}`);
    assert.deepEqual([pool.body.data.canGenerate, pool.body.data.ai.scope], [false, 'ai_workspace_pool']);
    assert.equal((await call('GET', `/v1/usage?projectId=${p2.id}`)).body.data.canGenerate, true, 'projects keep their own budget');

    const cleared = await ok(['budget', 'set', '--workspace', w.id, '--project', p1.id, '--clear']);
    assert.equal(cleared.targets.find((t: any) => t.target === p1.id).ownBudgetCents, null);
    assert.equal((await call('GET', `/v1/usage?projectId=${p1.id}`)).body.data.canGenerate, true);
    const shown = await ok(['budget', 'show', '--workspace', w.id]);
    assert.equal(shown.targets.find((t: any) => t.target === 'pool').ownBudgetCents, 0);

    await fails(['budget', 'set', '--workspace', w.id, '--project', page.id, '--weekly-cents', '5'], 1, /draws on the workspace pool/);
    await fails(['budget', 'set', '--workspace', w.id, '--weekly-cents', '5'], 2, /give --project proj_x or --pool/);
    await fails(['budget', 'set', '--workspace', w.id, '--pool'], 2, /give --weekly-cents CENTS or --clear/);
  });

  it('creates a key with an empty scope set: it authenticates and every scoped call is refused', async () => {
    const w = await ok(['workspace', 'create', '--name', `Empty ${unique()}`, '--plan', 'BUSINESS']);
    const k = await ok(['key', 'create', '--workspace', w.id, '--empty-scopes', '--name', 'probe']);
    assert.deepEqual(k.scopes, []);
    const call = client(api.url, k.key);
    assert.equal((await call('GET', '/v1/health/auth')).status, 200);
    const me = await call('GET', '/v1/workspaces/me');
    assert.equal(me.status, 200, 'any valid key reads its own workspace');
    assert.deepEqual(me.body.data.principal.scopes, []);
    const context = await call('GET', '/v1/workspaces/context');
    assert.equal(context.status, 403, JSON.stringify(context.body));
    assert.equal(context.body.error.code, 'scope_missing');
    await fails(
      ['key', 'create', '--workspace', w.id, '--empty-scopes', '--scopes', 'read'],
      2,
      /give --scopes or --empty-scopes, not both/,
    );
  });

  it('mints an OAuth access token for a user, client and scope set', async () => {
    const { w } = await workspaceWithKey();
    const email = `oauth.${unique()}@example.com`;
    await ok(['user', 'create', '--email', email]);
    await ok(['member', 'add', '--workspace', w.id, '--user', email, '--role', 'Admin']);
    const reg = await fetch(`${api.url}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Admin CLI test', redirect_uris: ['http://127.0.0.1:9/callback'] }),
    });
    assert.equal(reg.status, 201);
    const { client_id: clientId } = (await reg.json()) as { client_id: string };

    const t = await ok(['oauth', 'token', '--user', email, '--client', clientId, '--scopes', 'workspace:read']);
    assert.match(t.access_token, /^svc_oat_/);
    assert.deepEqual([t.token_type, t.scope, t.workspaceId], ['Bearer', 'workspace:read', w.id]);
    const call = client(api.url, t.access_token);
    const me = await call('GET', '/v1/workspaces/me');
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.data.principal.type, 'oauth_token');
    assert.equal(me.body.data.workspace.id, w.id);
    const denied = await call('GET', '/v1/posts');
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'scope_missing');

    // The token hangs off a real grant: revoking the user's grants kills it.
    const grants = await ok(['grant', 'list', '--user', email]);
    assert.equal(grants.grants.length, 1);
    await ok(['grant', 'revoke', '--user', email, '--all']);
    assert.equal((await call('GET', '/v1/workspaces/me')).status, 401);

    const outsider = `out.${unique()}@example.com`;
    await ok(['user', 'create', '--email', outsider]);
    await fails(
      ['oauth', 'token', '--user', outsider, '--client', clientId, '--scopes', 'read', '--workspace', w.id],
      1,
      /does not reach workspace/,
    );
    await fails(['oauth', 'token', '--user', email, '--client', 'cli_missing', '--scopes', 'read'], 1, /no OAuth client cli_missing/);
    await fails(['oauth', 'token', '--user', email, '--client', clientId, '--scopes', 'posts:reed'], 1, /unknown scopes: posts:reed/);
  });
});
