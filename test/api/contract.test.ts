import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';

// Contract points of spec 2.2, 7.2 and 8 that every operation follows because they live in
// the one pipeline (api/pipeline): missing named fields, Idempotency-Key bounds, no-store.

async function count(table: string, where: Record<string, string>): Promise<number> {
  const [{ n }] = await db()(table).where(where).count({ n: '*' });
  return Number(n);
}

describe('contract rules of the pipeline', () => {
  const api = useApi();

  describe('spec 7.2: missing projectId or source fields are 400 invalid_request; bad shapes stay 422', () => {
    it('POST /v1/posts {} and POST /v1/notes without projectId answer 400 naming the field', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      for (const [path, body] of [
        ['/v1/posts', {}],
        ['/v1/posts', { content: 'x' }],
        ['/v1/notes', { content: 'x' }],
      ] as const) {
        const err = assertError(await call('POST', path, { body }), 400, 'invalid_request');
        assert.match(err.message, /projectId/, `${path} ${JSON.stringify(body)}`);
        assert.deepEqual(
          err.details?.issues.map((i: { path: string }) => i.path),
          ['projectId'],
        );
      }
      // Bad shapes and enums beside a present projectId stay 422.
      assertError(await call('POST', '/v1/posts', { body: { projectId: project.id, contentType: 'SHOUTING' } }), 422, 'unprocessable');
      assertError(await call('POST', '/v1/posts', { body: { projectId: 42 } }), 422, 'unprocessable');
      assertError(await call('POST', '/v1/notes', { body: { projectId: project.id } }), 422, 'unprocessable');
      assert.equal(await count('posts', { project_id: project.id }), 0);
    });

    it('generation without projectId or source, or without source.text, answers 400', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      for (const body of [
        { source: { type: 'text', text: 'x' } },
        { projectId: project.id },
        { projectId: project.id, source: { type: 'text' } },
      ]) {
        assertError(await call('POST', '/v1/posts/generations', { body }), 400, 'invalid_request');
      }
      assertError(
        await call('POST', '/v1/posts/generations', { body: { projectId: project.id, source: { type: 'video' } } }),
        422,
        'unprocessable',
      );
      assert.equal(await count('jobs', { project_id: project.id }), 0);
    });
  });

  describe('spec 8: Idempotency-Key is 1 to 64 characters of A-Za-z0-9_-', () => {
    it('refuses an empty, over-long or badly spelled key with 400 invalid_request and changes nothing', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      for (const bad of ['', ' ', 'k'.repeat(65), 'semi;colon']) {
        const post = await call('POST', '/v1/posts', {
          body: { projectId: project.id, content: 'once' },
          headers: { 'Idempotency-Key': bad },
        });
        const err = assertError(post, 400, 'invalid_request');
        assert.deepEqual(err.details, { header: 'Idempotency-Key' }, JSON.stringify(bad));
        assertError(
          await call('POST', '/v1/notes', { body: { projectId: project.id, content: 'once' }, headers: { 'Idempotency-Key': bad } }),
          400,
          'invalid_request',
        );
      }
      assert.equal(await count('posts', { project_id: project.id }), 0);
      assert.equal(await count('notes', { project_id: project.id }), 0);
      // Without the header the write runs.
      assert.equal((await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'once' } })).status, 200);
    });
  });

  describe('spec 2.2: authenticated answers are never stored by a cache', () => {
    it('GET /v1/workspaces/me, lists and writes answer Cache-Control: no-store; the public health check does not', async () => {
      const { key, project } = await workspaceWithKey();
      const call = client(api.url, key);
      const me = await call('GET', '/v1/workspaces/me');
      assert.equal(me.status, 200);
      assert.equal(me.headers.get('cache-control'), 'no-store');
      for (const [method, path, body] of [
        ['GET', '/v1/projects'],
        ['GET', `/v1/posts?projectId=${project.id}`],
        ['GET', '/v1/team'],
        ['POST', '/v1/posts', { projectId: project.id }],
      ] as const) {
        const res = await call(method, path, { body });
        assert.equal(res.status, 200, `${method} ${path}`);
        assert.equal(res.headers.get('cache-control'), 'no-store', `${method} ${path}`);
      }
      assert.equal((await call('GET', '/v1/workspaces/nope')).headers.get('cache-control'), 'no-store');
      const health = await fetch(`${api.url}/v1/health`);
      assert.equal(health.status, 200);
      assert.equal(health.headers.get('cache-control'), null);
    });
  });
});
