import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { client, useApi } from '../support/app';
import { uniqueKey, workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';

// spec 8 Idempotency: same key + same body replays the first answer (Idempotent-Replayed:
// true), another body under the key is 409 idempotency_key_conflict, and concurrent
// duplicates run the handler once.

async function postCount(projectId: string): Promise<number> {
  const [{ n }] = await db()('posts').where({ project_id: projectId }).count({ n: '*' });
  return Number(n);
}

describe('Idempotency-Key (spec 8)', () => {
  const api = useApi();

  it('refuses a malformed key with 400 invalid_request before doing anything', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    for (const bad of ['has space', 'x'.repeat(65), 'semi;colon', 'ünïcode', 'a.b']) {
      const res = await call('POST', '/v1/posts', { body: { projectId: project.id }, headers: { 'Idempotency-Key': bad } });
      assertError(res, 400, 'invalid_request');
    }
    assert.equal(await postCount(project.id), 0);
    // The bounds themselves are fine.
    for (const good of ['a', 'A-z_0'.padEnd(64, '9')]) {
      const res = await call('POST', '/v1/posts', { body: { projectId: project.id }, headers: { 'Idempotency-Key': good } });
      assert.equal(res.status, 200, `${good}: ${JSON.stringify(res.body)}`);
    }
  });

  it('replays the first answer with Idempotent-Replayed: true and runs the handler once', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    const k = uniqueKey();
    const body = { projectId: project.id, content: 'Replay me', title: 'T' };
    const first = await call('POST', '/v1/posts', { body, headers: { 'Idempotency-Key': k } });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.headers.get('idempotent-replayed'), 'false');

    // Same body with its keys in another order is the same request.
    const again = await call('POST', '/v1/posts', {
      body: { title: 'T', content: 'Replay me', projectId: project.id },
      headers: { 'Idempotency-Key': k },
    });
    assert.equal(again.status, first.status);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(await postCount(project.id), 1);
  });

  it('answers the same key with a different body with 409 idempotency_key_conflict', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    const k = uniqueKey();
    assert.equal(
      (await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'one' }, headers: { 'Idempotency-Key': k } })).status,
      200,
    );
    assertError(
      await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'two' }, headers: { 'Idempotency-Key': k } }),
      409,
      'idempotency_key_conflict',
    );
    // The same key on another operation is a different request as well.
    assertError(
      await call('POST', '/v1/notes', { body: { projectId: project.id, content: 'one' }, headers: { 'Idempotency-Key': k } }),
      409,
      'idempotency_key_conflict',
    );
    assert.equal(await postCount(project.id), 1);
  });

  it('keeps keys apart per workspace', async () => {
    const a = await workspaceWithKey();
    const b = await workspaceWithKey();
    const k = uniqueKey();
    const ra = await client(api.url, a.key)('POST', '/v1/posts', { body: { projectId: a.project.id }, headers: { 'Idempotency-Key': k } });
    const rb = await client(api.url, b.key)('POST', '/v1/posts', { body: { projectId: b.project.id }, headers: { 'Idempotency-Key': k } });
    assert.equal(ra.status, 200);
    assert.equal(rb.status, 200);
    assert.equal(rb.headers.get('idempotent-replayed'), 'false');
    assert.notEqual(ra.body.data.id, rb.body.data.id);
  });

  it('creates exactly one post for 10 concurrent identical requests', async () => {
    const { key, project } = await workspaceWithKey();
    const k = uniqueKey();
    const body = { projectId: project.id, content: 'Only once' };
    const results = await Promise.all(
      Array.from({ length: 10 }, () => client(api.url, key)('POST', '/v1/posts', { body, headers: { 'Idempotency-Key': k } })),
    );
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(new Set(results.map((r) => r.body.data.id)).size, 1);
    assert.equal(results.filter((r) => r.headers.get('idempotent-replayed') === 'false').length, 1);
    assert.equal(results.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, 9);
    assert.equal(await postCount(project.id), 1);
    const [{ n }] = await db()('outbox_events').where({ project_id: project.id, type: 'post.created' }).count({ n: '*' });
    assert.equal(Number(n), 1, 'one post.created event');
  });

  it('replays a 4xx answer of the handler as the same error', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    const k = uniqueKey();
    const body = { projectId: project.id, scheduledFor: '2020-01-01T09:00:00Z' };
    const first = await call('POST', '/v1/posts', { body, headers: { 'Idempotency-Key': k } });
    const e1 = assertError(first, 422, 'unprocessable');
    assert.equal(first.headers.get('idempotent-replayed'), 'false');
    const second = await call('POST', '/v1/posts', { body, headers: { 'Idempotency-Key': k } });
    const e2 = assertError(second, 422, 'unprocessable');
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(e2.message, e1.message);
    assert.deepEqual(e2.details, e1.details);
    assert.notEqual(e2.request_id, e1.request_id, 'each answer has its own request id');

    const k2 = uniqueKey();
    const missing = { projectId: 'proj_doesnotexist000000000000' };
    assertError(await call('POST', '/v1/posts', { body: missing, headers: { 'Idempotency-Key': k2 } }), 404, 'not_found');
    const replay = await call('POST', '/v1/posts', { body: missing, headers: { 'Idempotency-Key': k2 } });
    assertError(replay, 404, 'not_found');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(await postCount(project.id), 0);
  });

  it('sends Idempotent-Replayed: false on a write without a key', async () => {
    const { key, project } = await workspaceWithKey();
    const res = await client(api.url, key)('POST', '/v1/posts', { body: { projectId: project.id } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('idempotent-replayed'), 'false');
  });
});
