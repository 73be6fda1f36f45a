import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { decrypt } from '../../lib/crypto';
import { newId } from '../../lib/ids';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { startOAuthApi } from '../oauth/support';
import { oauthToken } from '../oauth/support';

// spec 4.8 webhook endpoints over HTTP with OAuth tokens from the real authorization flow.

describe('webhook endpoints API (spec 4.8)', function () {
  this.timeout(60_000);
  let api: Awaited<ReturnType<typeof startOAuthApi>>;
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  let call: ReturnType<typeof client>;

  before(async () => {
    api = await startOAuthApi();
    ws = await workspaceWithKey({ projects: 2 });
    call = client(api.url, await oauthToken(api.url, ws.workspace.id));
  });
  after(async () => {
    api.restore();
    await api.close();
  });

  const create = (body: Record<string, unknown>) => call('POST', '/v1/webhook-endpoints', { body });

  it('refuses every operation to an API key with scope_missing naming webhooks:manage (spec 5.1)', async () => {
    const { key } = await workspaceWithKey({ scopes: ['read', 'write'] });
    const k = client(api.url, key);
    const fake = newId('webhookEndpoint');
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/v1/webhook-endpoints'],
      ['POST', '/v1/webhook-endpoints', { url: 'https://hooks.example.com/x', events: ['post.updated'] }],
      ['GET', `/v1/webhook-endpoints/${fake}`],
      ['PATCH', `/v1/webhook-endpoints/${fake}`, { isActive: true }],
      ['DELETE', `/v1/webhook-endpoints/${fake}`],
      ['POST', `/v1/webhook-endpoints/${fake}/rotate-secret`, {}],
      ['GET', `/v1/webhook-endpoints/${fake}/deliveries`],
    ];
    for (const [method, path, body] of calls) {
      const err = assertError(await k(method, path, { body }), 403, 'scope_missing');
      assert.deepEqual(err.details, { required_scope: 'webhooks:manage' }, `${method} ${path}`);
    }
  });

  it('refuses an OAuth token without webhooks:manage', async () => {
    const other = client(api.url, await oauthToken(api.url, ws.workspace.id, { scope: 'read write' }));
    const err = assertError(await other('GET', '/v1/webhook-endpoints'), 403, 'scope_missing');
    assert.equal(err.details?.required_scope, 'webhooks:manage');
  });

  it('refuses client-role accounts with forbidden_project / client_role (spec 5.4)', async () => {
    const c = client(api.url, await oauthToken(api.url, ws.workspace.id, { role: 'Client' }));
    const err = assertError(await c('GET', '/v1/webhook-endpoints'), 403, 'forbidden_project');
    assert.equal(err.details?.reason, 'client_role');
    assertError(
      await c('POST', '/v1/webhook-endpoints', { body: { url: 'https://hooks.example.com/x', events: ['post.updated'] } }),
      403,
      'forbidden_project',
    );
  });

  it('creates an endpoint and shows its secret once; get and list show only secretLast4', async () => {
    const res = await create({
      url: 'https://hooks.example.com/in',
      events: ['post.updated', 'post.scheduled', 'post.updated'],
      name: 'CRM sync',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const e = res.body.data;
    assert.match(e.id, /^whe_[A-Za-z0-9]{24}$/);
    assert.equal(e.url, 'https://hooks.example.com/in');
    assert.equal(e.name, 'CRM sync');
    assert.deepEqual(e.events, ['post.updated', 'post.scheduled'], 'duplicates are dropped');
    assert.equal(e.isActive, true);
    assert.equal(e.disabledReason, null);
    assert.equal(e.projectId, null);
    assert.match(e.secret, /^whsec_[A-Za-z0-9]{40}$/);
    assert.equal(e.secretLast4, e.secret.slice(-4));
    assert.ok(Date.parse(e.createdAt) && Date.parse(e.updatedAt));
    assert.equal(res.headers.get('idempotent-replayed'), 'false');

    const row = await db()('webhook_endpoints').where({ id: e.id }).first();
    assert.notEqual(row.secret_enc, e.secret, 'not stored in plaintext');
    assert.equal(decrypt(row.secret_enc), e.secret);

    const got = await call('GET', `/v1/webhook-endpoints/${e.id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.data.secret, undefined);
    assert.equal(got.body.data.secretLast4, e.secretLast4);
    const list = await call('GET', '/v1/webhook-endpoints');
    assert.ok(!JSON.stringify(list.body).includes(e.secret), 'a list never carries the plaintext secret');
    assert.ok(list.body.data.every((x: Record<string, unknown>) => !('secret' in x)));
  });

  it('validates the URL, the event names and the project on create', async () => {
    const bad = async (body: Record<string, unknown>, pattern: RegExp) => {
      const err = assertError(await create(body), 422, 'unprocessable');
      assert.match(err.message, pattern);
    };
    await bad({ url: 'ftp://hooks.example.com', events: ['post.updated'] }, /url/);
    await bad({ url: 'https://169.254.169.254/latest/meta-data', events: ['post.updated'] }, /metadata/);
    await bad({ url: 'https://10.1.2.3/x', events: ['post.updated'] }, /private/);
    await bad({ url: 'https://[fd00::1]/x', events: ['post.updated'] }, /unique-local/);
    await bad({ url: 'https://user:pw@hooks.example.com/', events: ['post.updated'] }, /credentials/);
    await bad({ url: 'https://hooks.example.com/x', events: [] }, /at least one/);
    await bad({ url: 'https://hooks.example.com/x', events: ['post.exploded'] }, /post\.exploded/);
    await bad({ url: 'https://hooks.example.com/x', events: ['post.updated'], secret: 'mine' }, /secret/);
    await bad({ events: ['post.updated'] }, /url/);
    assertError(await create({ url: 'https://hooks.example.com/x', events: ['post.updated'], projectId: 'proj_nope' }), 404, 'not_found');
    const other = await workspaceWithKey();
    assertError(
      await create({ url: 'https://hooks.example.com/x', events: ['post.updated'], projectId: other.project.id }),
      404,
      'not_found',
    );
  });

  it('binds an endpoint to one project', async () => {
    const res = await create({ url: 'https://hooks.example.com/p', events: ['post.created'], projectId: ws.projects[1]!.id });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.projectId, ws.projects[1]!.id);
  });

  it('replays a create with the same Idempotency-Key instead of making a second endpoint', async () => {
    const key = `k_${Date.now()}`;
    const body = { url: 'https://hooks.example.com/idem', events: ['job.completed'] };
    const a = await call('POST', '/v1/webhook-endpoints', { body, headers: { 'Idempotency-Key': key } });
    const b = await call('POST', '/v1/webhook-endpoints', { body, headers: { 'Idempotency-Key': key } });
    assert.equal(a.status, 200);
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
    assert.equal(b.body.data.id, a.body.data.id);
    // The replay shows the same secret, but the idempotency record never holds it in clear.
    assert.equal(b.body.data.secret, a.body.data.secret);
    const stored = await db()('idempotency_keys').where({ key }).first();
    assert.ok(!JSON.stringify(stored.response_body).includes(a.body.data.secret));
  });

  describe('list (spec 4.8: limit, cursor, createdAt desc, total)', () => {
    let lw: Awaited<ReturnType<typeof workspaceWithKey>>;
    let lc: ReturnType<typeof client>;
    let ids: string[];
    before(async () => {
      lw = await workspaceWithKey();
      lc = client(api.url, await oauthToken(api.url, lw.workspace.id));
      // Direct rows: 205 endpoints exceed the creation limit, and equal timestamps exercise the id tie-break.
      const base = Date.now() - 1_000_000;
      const rows = Array.from({ length: 205 }, (_, i) => ({
        id: newId('webhookEndpoint'),
        workspace_id: lw.workspace.id,
        url: `https://hooks.example.com/${i}`,
        name: `e${i}`,
        events: ['post.updated'],
        secret_enc: 'v1.x.x.x',
        secret_last4: 'abcd',
        created_at: new Date(base + Math.floor(i / 2) * 1000),
      }));
      await db()('webhook_endpoints').insert(rows);
      // The list's order as the database reads it (ids in a tie compared in its collation).
      ids = await db()('webhook_endpoints')
        .where({ workspace_id: lw.workspace.id })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .pluck('id');
      assert.equal(ids.length, rows.length);
    });

    it('defaults to 50, orders by createdAt desc then id, and reports the total', async () => {
      const res = await lc('GET', '/v1/webhook-endpoints');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.length, 50);
      assert.deepEqual(
        res.body.data.map((e: { id: string }) => e.id),
        ids.slice(0, 50),
      );
      assert.equal(res.body.pagination.total, 205);
      assert.equal(res.body.pagination.has_more, true);
      assert.equal(typeof res.body.pagination.next_cursor, 'string');
    });

    it('clamps a limit above 200 silently and walks every row with the cursor', async () => {
      const first = await lc('GET', '/v1/webhook-endpoints?limit=1000');
      assert.equal(first.status, 200);
      assert.equal(first.body.data.length, 200);
      const second = await lc('GET', `/v1/webhook-endpoints?limit=1000&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`);
      assert.equal(second.body.data.length, 5);
      assert.equal(second.body.pagination.has_more, false);
      assert.equal(second.body.pagination.next_cursor, null);
      assert.equal(second.body.pagination.total, 205);
      assert.deepEqual(
        [...first.body.data, ...second.body.data].map((e: { id: string }) => e.id),
        ids,
      );
    });

    it('answers 400 bad_pagination for a non-integer or a limit below 1, and bad_cursor for a forged cursor', async () => {
      for (const v of ['0', '-3', 'abc', '2.5', '1e2'])
        assertError(await lc('GET', `/v1/webhook-endpoints?limit=${v}`), 400, 'bad_pagination');
      assertError(await lc('GET', '/v1/webhook-endpoints?cursor=forged.value'), 400, 'bad_cursor');
    });
  });

  it('updates fields, disables and re-enables through PATCH (spec 3.5)', async () => {
    const e = (await create({ url: 'https://hooks.example.com/a', events: ['post.updated'] })).body.data;
    await db()('webhook_endpoints').where({ id: e.id }).update({ consecutive_failures: 3 });
    const off = await call('PATCH', `/v1/webhook-endpoints/${e.id}`, {
      body: { isActive: false, name: 'paused', events: ['post.deleted', 'post.published'] },
    });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.equal(off.body.data.isActive, false);
    assert.equal(typeof off.body.data.disabledReason, 'string');
    assert.equal(off.body.data.name, 'paused');
    assert.deepEqual(off.body.data.events, ['post.deleted', 'post.published']);
    const on = await call('PATCH', `/v1/webhook-endpoints/${e.id}`, {
      body: { isActive: true, url: 'https://hooks2.example.com/b', projectId: ws.project.id },
    });
    assert.equal(on.body.data.isActive, true);
    assert.equal(on.body.data.disabledReason, null);
    assert.equal(on.body.data.consecutiveFailures, 0, 're-enabling resets the streak');
    assert.equal(on.body.data.url, 'https://hooks2.example.com/b');
    assert.equal(on.body.data.projectId, ws.project.id);
    const unbound = await call('PATCH', `/v1/webhook-endpoints/${e.id}`, { body: { projectId: null } });
    assert.equal(unbound.body.data.projectId, null);
    assertError(await call('PATCH', `/v1/webhook-endpoints/${e.id}`, { body: {} }), 422, 'unprocessable');
    assertError(await call('PATCH', `/v1/webhook-endpoints/${e.id}`, { body: { isActive: 'yes' } }), 422, 'unprocessable');
    assertError(
      await call('PATCH', `/v1/webhook-endpoints/${e.id}`, { body: { url: 'https://127.0.0.1.nip.io.invalid@10.0.0.1/' } }),
      422,
      'unprocessable',
    );
    assertError(await call('PATCH', `/v1/webhook-endpoints/${e.id}`, { body: { secretLast4: 'abcd' } }), 422, 'unprocessable');
  });

  it('rotates the secret: a new one shown once, optionally keeping the old one for a while', async () => {
    const created = (await create({ url: 'https://hooks.example.com/r', events: ['post.updated'] })).body.data;
    const r1 = await call('POST', `/v1/webhook-endpoints/${created.id}/rotate-secret`);
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.match(r1.body.data.secret, /^whsec_/);
    assert.notEqual(r1.body.data.secret, created.secret);
    assert.equal(r1.body.data.secretLast4, r1.body.data.secret.slice(-4));
    assert.equal(r1.body.data.previousSecretExpiresAt, null);
    let row = await db()('webhook_endpoints').where({ id: created.id }).first();
    assert.equal(decrypt(row.secret_enc), r1.body.data.secret);
    assert.equal(row.previous_secret_enc, null);

    const r2 = await call('POST', `/v1/webhook-endpoints/${created.id}/rotate-secret`, { body: { previousSecretExpiresInSeconds: 3600 } });
    assert.ok(Math.abs(Date.parse(r2.body.data.previousSecretExpiresAt) - (Date.now() + 3_600_000)) < 60_000);
    row = await db()('webhook_endpoints').where({ id: created.id }).first();
    assert.equal(decrypt(row.secret_enc), r2.body.data.secret);
    assert.equal(decrypt(row.previous_secret_enc), r1.body.data.secret);
    assertError(
      await call('POST', `/v1/webhook-endpoints/${created.id}/rotate-secret`, { body: { previousSecretExpiresInSeconds: 10 ** 9 } }),
      422,
      'unprocessable',
    );
    const got = await call('GET', `/v1/webhook-endpoints/${created.id}`);
    assert.equal(got.body.data.secret, undefined);
  });

  it('deletes an endpoint; it is then not found', async () => {
    const e = (await create({ url: 'https://hooks.example.com/d', events: ['post.updated'] })).body.data;
    const del = await call('DELETE', `/v1/webhook-endpoints/${e.id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body.data, { id: e.id, deleted: true });
    assertError(await call('GET', `/v1/webhook-endpoints/${e.id}`), 404, 'not_found');
    assertError(await call('DELETE', `/v1/webhook-endpoints/${e.id}`), 404, 'not_found');
    const row = await db()('webhook_endpoints').where({ id: e.id }).first();
    assert.equal(row.secret_enc, null, 'the secret is wiped');
  });

  it('never shows another workspace’s endpoints (spec 1 rule 1)', async () => {
    const mine = (await create({ url: 'https://hooks.example.com/mine', events: ['post.updated'] })).body.data;
    const other = await workspaceWithKey();
    const theirs = client(api.url, await oauthToken(api.url, other.workspace.id));
    assertError(await theirs('GET', `/v1/webhook-endpoints/${mine.id}`), 404, 'not_found');
    assertError(await theirs('PATCH', `/v1/webhook-endpoints/${mine.id}`, { body: { isActive: false } }), 404, 'not_found');
    assertError(await theirs('POST', `/v1/webhook-endpoints/${mine.id}/rotate-secret`), 404, 'not_found');
    assertError(await theirs('DELETE', `/v1/webhook-endpoints/${mine.id}`), 404, 'not_found');
    assertError(await theirs('GET', `/v1/webhook-endpoints/${mine.id}/deliveries`), 404, 'not_found');
    const list = await theirs('GET', '/v1/webhook-endpoints');
    assert.equal(list.body.pagination.total, 0);
  });
});
