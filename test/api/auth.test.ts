import assert from 'node:assert/strict';
import { createWorkspace, issueApiKey, revokeApiKey, setApiKeyScopes, setWorkspacePlan } from '../../admin/provision';
import { db } from '../../lib/db';
import { randomBase62 } from '../../lib/ids';
import { client, useApi, type CallResult } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError, startApiProcess, type ApiProcess } from '../support/foundation';
import { waitFor } from '../support/wait';

// spec 5.1 and 1 rule 2: who may call at all. Every refusal here is a 401 or 403 in the
// envelope; revocation reaches every process within 5 s, scope edits on the next request.

/**
 * GETs `path` every `everyMs` until it answers `status`: how long that took (null when not
 * within `withinMs`) and the last answer.
 */
async function untilAnswers(call: ReturnType<typeof client>, path: string, status: number, withinMs: number, everyMs: number) {
  let last: CallResult | undefined;
  const started = Date.now();
  const answered = await waitFor(
    async () => {
      last = await call('GET', path);
      return last.status === status && { elapsed: Date.now() - started };
    },
    withinMs,
    `${path} to answer ${status}`,
    everyMs,
  ).catch(() => null);
  return { elapsed: answered?.elapsed ?? null, last: last! };
}

describe('authentication (spec 5.1)', () => {
  const api = useApi();

  it('answers a request without Authorization with 401 unauthenticated', async () => {
    assertError(await client(api.url)('GET', '/v1/workspaces/me'), 401, 'unauthenticated');
  });

  it('answers malformed and unknown credentials with 401 invalid_token', async () => {
    const call = client(api.url);
    const cases = [
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer not-a-key',
      'Bearer svc_sk_live_short',
      `Bearer svc_sk_live_${randomBase62(40)}`, // well-formed, never issued
      `Bearer svc_oat_${randomBase62(40)}`, // a credential kind this door does not know here
    ];
    for (const authorization of cases) {
      assertError(await call('GET', '/v1/workspaces/me', { headers: { Authorization: authorization } }), 401, 'invalid_token');
    }
  });

  it('answers an expired key with 401 key_expired', async () => {
    const { workspace } = await workspaceWithKey();
    const expired = await issueApiKey({ workspaceId: workspace.id, scopes: ['read'], expiresAt: new Date(Date.now() - 1000) });
    assertError(await client(api.url, expired.key)('GET', '/v1/workspaces/me'), 401, 'key_expired');
    const live = await issueApiKey({ workspaceId: workspace.id, scopes: ['read'], expiresAt: new Date(Date.now() + 3600_000) });
    assert.equal((await client(api.url, live.key)('GET', '/v1/workspaces/me')).status, 200);
  });

  it('answers a key of a plan without API access with 403 plan_not_eligible', async () => {
    const { key } = await workspaceWithKey({ plan: 'STARTER' });
    assertError(await client(api.url, key)('GET', '/v1/workspaces/me'), 403, 'plan_not_eligible');
    const free = await workspaceWithKey({ plan: 'FREE' });
    assertError(await client(api.url, free.key)('GET', '/v1/projects'), 403, 'plan_not_eligible');
  });

  it('gates on the paying workspace plan when an agency pays (spec 5.5)', async () => {
    const agency = await createWorkspace({ name: 'Agency', plan: 'BUSINESS' });
    const billed = await createWorkspace({ name: 'Client co', plan: 'STARTER', billingWorkspaceId: agency.id });
    const key = await issueApiKey({ workspaceId: billed.id, scopes: ['read'] });
    const me = await client(api.url, key.key)('GET', '/v1/workspaces/me');
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.data.workspace.plan, 'BUSINESS');
  });

  it('applies a plan downgrade on the next request', async () => {
    const { key, workspace } = await workspaceWithKey();
    const call = client(api.url, key);
    assert.equal((await call('GET', '/v1/workspaces/me')).status, 200);
    await setWorkspacePlan(workspace.id, 'STARTER');
    assertError(await call('GET', '/v1/workspaces/me'), 403, 'plan_not_eligible');
  });

  it('answers a revoked key with 401 key_revoked at once after revokeApiKey', async () => {
    const { key, keyId } = await workspaceWithKey();
    const call = client(api.url, key);
    assert.equal((await call('GET', '/v1/workspaces/me')).status, 200); // cached now
    await revokeApiKey(keyId);
    assertError(await call('GET', '/v1/workspaces/me'), 401, 'key_revoked');
  });

  it('honours a revocation written straight to the database (no invalidation) within 5 s', async function () {
    this.timeout(15_000);
    const { key, keyId } = await workspaceWithKey();
    const call = client(api.url, key);
    assert.equal((await call('GET', '/v1/workspaces/me')).status, 200); // the record is now cached
    await db()('api_keys').where({ id: keyId }).update({ revoked_at: new Date() });
    const revokedAfter = Date.now();
    const { elapsed, last } = await untilAnswers(call, '/v1/workspaces/me', 401, 5_000, 200);
    assert.ok(elapsed !== null, `still ${last.status} 5 s after the revocation`);
    assert.ok(Date.now() - revokedAfter <= 5_200, `took ${Date.now() - revokedAfter} ms`);
    assertError(last, 401, 'key_revoked');
  });

  it('applies scope edits on the next request', async () => {
    const { key, keyId, project } = await workspaceWithKey({ scopes: ['posts:read'] });
    const call = client(api.url, key);
    assert.equal((await call('GET', `/v1/posts?projectId=${project.id}`)).status, 200);
    assertError(await call('POST', '/v1/posts', { body: { projectId: project.id } }), 403, 'scope_missing');

    await setApiKeyScopes(keyId, ['posts:write']);
    const created = await call('POST', '/v1/posts', { body: { projectId: project.id } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const me = await call('GET', '/v1/workspaces/me');
    assert.deepEqual(me.body.data.principal.scopes, ['posts:write']);

    await setApiKeyScopes(keyId, ['notes:read']);
    const err = assertError(await call('GET', `/v1/posts?projectId=${project.id}`), 403, 'scope_missing');
    assert.equal(err.details?.required_scope, 'posts:read');
  });

  it('refuses Service-Workspace-Id naming another workspace for an API key with workspace_unavailable', async () => {
    const a = await workspaceWithKey();
    const b = await workspaceWithKey();
    const call = client(api.url, a.key);
    const res = await call('GET', '/v1/workspaces/me', { headers: { 'Service-Workspace-Id': b.workspace.id } });
    assertError(res, 403, 'workspace_unavailable');
    const unknown = await call('GET', `/v1/projects/${a.project.id}`, { headers: { 'Service-Workspace-Id': `org_${randomBase62(24)}` } });
    assertError(unknown, 403, 'workspace_unavailable');
    // Naming its own workspace is fine.
    const own = await call('GET', '/v1/workspaces/me', { headers: { 'Service-Workspace-Id': a.workspace.id } });
    assert.equal(own.status, 200);
    assert.equal(own.body.data.workspace.id, a.workspace.id);
  });

  it('keeps /v1/health public and /v1/health/auth behind a credential', async () => {
    assert.equal((await client(api.url)('GET', '/v1/health')).status, 200);
    assertError(await client(api.url)('GET', '/v1/health/auth'), 401, 'unauthenticated');
    const { key, keyId, workspace } = await workspaceWithKey({ scopes: [] });
    const res = await client(api.url, key)('GET', '/v1/health/auth');
    assert.equal(res.status, 200, 'an operation naming no scope accepts any valid key');
    assert.deepEqual(res.body.data, { status: 'ok', workspaceId: workspace.id, principal: { type: 'api_key', id: keyId } });
  });
});

describe('credential changes across API processes (spec 5.1)', function () {
  this.timeout(60_000);
  let proc: ApiProcess;
  // The second process caches key records for 10 minutes, so only the Redis invalidation can
  // make it see an edit within the bound; the cache lifetime cannot be what passes the test.
  before(async () => {
    proc = await startApiProcess({ AUTH_CACHE_MS: '600000' });
  });
  after(async () => {
    await proc?.close();
  });

  it('sees revokeApiKey within 5 s through the Redis invalidation', async () => {
    const { key, keyId } = await workspaceWithKey();
    const call = client(proc.url, key);
    assert.equal((await call('GET', '/v1/workspaces/me')).status, 200);
    await revokeApiKey(keyId);
    const { elapsed, last } = await untilAnswers(call, '/v1/workspaces/me', 401, 5_000, 100);
    assert.ok(elapsed !== null, `the other process still answered ${last.status} after 5 s`);
    assertError(last, 401, 'key_revoked');
  });

  it('sees scope edits on the next request through the Redis invalidation', async () => {
    const { key, keyId, project } = await workspaceWithKey({ scopes: ['posts:read'] });
    const call = client(proc.url, key);
    assert.equal((await call('GET', `/v1/posts?projectId=${project.id}`)).status, 200);
    await setApiKeyScopes(keyId, ['notes:read']);
    // Delivery of the Redis message and the next HTTP request race inside the other process,
    // so allow the few milliseconds pub/sub takes, far below any cache lifetime.
    const { elapsed, last } = await untilAnswers(call, `/v1/posts?projectId=${project.id}`, 403, 1_000, 50);
    assert.ok(elapsed !== null, `scope edit not seen: ${last.status}`);
    assert.equal(assertError(last, 403, 'scope_missing').details?.required_scope, 'posts:read');
  });
});
