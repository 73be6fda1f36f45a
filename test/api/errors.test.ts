import assert from 'node:assert/strict';
import Router from '@koa/router';
import { z } from 'zod';
import { defineOperation } from '../../api/operation';
import { route } from '../../api/rest/adapter';
import { client, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError, startApiWith } from '../support/foundation';

// spec 7.1: every REST error, whatever produced it (router, body parser, validation, an
// unexpected exception), is the one envelope with a req_ id equal to X-Request-Id.

const SECRET_DETAIL = 'db password is hunter2';

// A test-only route through the production adapter: the unexpected-exception path has no
// reliable trigger among the real routes, and it must never leak the thrown message.
const boom = defineOperation({
  name: 'test.boom',
  summary: 'throws',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  inputSource: 'query',
  input: z.object({}).strict(),
  output: z.object({}).strict(),
  handler: async () => {
    throw new Error(SECRET_DETAIL);
  },
});

describe('error envelope (spec 7.1)', () => {
  let api: TestServer;
  let key: string;
  let projectId: string;
  before(async () => {
    api = await startApiWith((app) => {
      const r = new Router();
      route(r, 'get', '/v1/__test/boom', boom);
      app.use(r.routes());
    });
    const ws = await workspaceWithKey();
    key = ws.key;
    projectId = ws.project.id;
  });
  after(async () => {
    await api.close();
  });

  it('answers an unknown route with 404 not_found', async () => {
    const res = await client(api.url, key)('GET', '/v1/no-such-thing');
    assertError(res, 404, 'not_found');
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  it('answers an unknown route without credentials with 404 too (routing comes before auth)', async () => {
    assertError(await client(api.url)('GET', '/v2/posts'), 404, 'not_found');
  });

  it('answers a wrong method with 405 and an Allow header naming the accepted methods', async () => {
    const res = await client(api.url, key)('DELETE', `/v1/posts/post_${'x'.repeat(24)}`);
    assertError(res, 405, 'method_not_allowed');
    const allow = (res.headers.get('allow') ?? '').split(',').map((s) => s.trim());
    assert.ok(allow.includes('GET'), `Allow: ${res.headers.get('allow')}`);
    assert.ok(allow.includes('PATCH'), `Allow: ${res.headers.get('allow')}`);
    assert.ok(!allow.includes('DELETE'));

    const put = await client(api.url, key)('PUT', '/v1/posts', { body: { projectId } });
    assertError(put, 405, 'method_not_allowed');
    assert.match(put.headers.get('allow') ?? '', /POST/);
  });

  it('answers a body that is not JSON with 400 invalid_request', async () => {
    const res = await client(api.url, key)('POST', '/v1/posts', { raw: '{"projectId": ', headers: { 'Content-Type': 'application/json' } });
    assertError(res, 400, 'invalid_request');
  });

  it('answers a JSON body that is an array (or another non-object) with 422 unprocessable', async () => {
    const call = client(api.url, key);
    assertError(await call('POST', '/v1/posts', { body: [{ projectId }] }), 422, 'unprocessable');
    assertError(await call('POST', '/v1/posts', { body: 'a string' }), 422, 'unprocessable');
    assertError(await call('POST', '/v1/posts', { raw: 'null', headers: { 'Content-Type': 'application/json' } }), 422, 'unprocessable');
    // Nothing was written by any of them.
    const list = await call('GET', `/v1/posts?projectId=${projectId}`);
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 0);
  });

  it('answers an unexpected exception with 500 internal_error and a generic message', async () => {
    const res = await client(api.url, key)('GET', '/v1/__test/boom');
    const err = assertError(res, 500, 'internal_error');
    assert.ok(!err.message.includes(SECRET_DETAIL), 'the thrown message leaked into the response');
    assert.ok(!JSON.stringify(res.body).includes('hunter2'));
    assert.equal(err.details, undefined);
  });

  it('gives every response its own req_ id, echoed in X-Request-Id', async () => {
    const call = client(api.url, key);
    const a = await call('GET', '/v1/nope');
    const b = await call('GET', '/v1/nope');
    const ea = assertError(a, 404, 'not_found');
    const eb = assertError(b, 404, 'not_found');
    assert.notEqual(ea.request_id, eb.request_id);
    const ok = await call('GET', '/v1/health');
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('x-request-id') ?? '', /^req_/);
  });

  it('refuses a NUL character in any input as a client error, never a 500', async () => {
    const call = client(api.url, key);
    // Postgres text cannot store U+0000; these used to fail inside the query.
    assertError(await call('GET', '/v1/projects/%00abc'), 400, 'invalid_request');
    assertError(await call('GET', '/v1/posts/post_%00'), 400, 'invalid_request');
    assertError(await call('GET', '/v1/posts?projectId=%00'), 400, 'invalid_request');
    const body = assertError(await call('POST', '/v1/posts', { body: { projectId, content: 'a\u0000b' } }), 422, 'unprocessable');
    assert.match(body.message, /content/);
    assertError(await call('POST', '/v1/notes', { body: { projectId, content: 'note\u0000' } }), 422, 'unprocessable');
    const list = await call('GET', `/v1/posts?projectId=${projectId}`);
    assert.equal(list.body.data.length, 0);
  });

  it('uses the envelope for validation errors with the failing field in details', async () => {
    const res = await client(api.url, key)('POST', '/v1/posts', { body: { projectId, unexpected: true } });
    const err = assertError(res, 422, 'unprocessable');
    assert.ok(Array.isArray(err.details?.issues));
  });
});
