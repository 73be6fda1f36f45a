import assert from 'node:assert/strict';
import Router from '@koa/router';
import { z } from 'zod';
import { defineOperation } from '../../api/operation';
import { route } from '../../api/rest/adapter';
import { READ_SCOPES, WRITE_SCOPES } from '../../lib/scopes';
import { client, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError, startApiWith } from '../support/foundation';

// spec 5.2 over HTTP: implications, the aliases as stored on a key, and when 403
// scope_missing names the scope. No real route needs two scopes or alternatives, so two
// test-only routes carry those rules through the production adapter.

const ok = async () => ({ data: { ok: true } });
const okOutput = z.object({ data: z.object({ ok: z.boolean() }).strict() }).strict();
const needsTwo = defineOperation({
  name: 'test.allOf',
  summary: 'two scopes',
  kind: 'read',
  scopes: { allOf: ['notes:read', 'knowledge:read'] },
  clientRole: 'allow',
  inputSource: 'query',
  input: z.object({}).strict(),
  output: okOutput,
  handler: ok,
});
const needsEither = defineOperation({
  name: 'test.anyOf',
  summary: 'alternatives',
  kind: 'read',
  scopes: { anyOf: ['sources:write', 'knowledge:write'] },
  clientRole: 'allow',
  inputSource: 'query',
  input: z.object({}).strict(),
  output: okOutput,
  handler: ok,
});

describe('scopes over HTTP (spec 5.2)', () => {
  let api: TestServer;
  before(async () => {
    api = await startApiWith((app) => {
      const r = new Router();
      route(r, 'get', '/v1/__test/all-of', needsTwo);
      route(r, 'get', '/v1/__test/any-of', needsEither);
      app.use(r.routes());
    });
  });
  after(async () => {
    await api.close();
  });

  it('lets posts:write read posts', async () => {
    const { key, project } = await workspaceWithKey({ scopes: ['posts:write'] });
    const res = await client(api.url, key)('GET', `/v1/posts?projectId=${project.id}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  it('lets posts:generate read posts but not write them', async () => {
    const { key, project } = await workspaceWithKey({ scopes: ['posts:generate'] });
    const call = client(api.url, key);
    assert.equal((await call('GET', `/v1/posts?projectId=${project.id}`)).status, 200);
    const err = assertError(await call('POST', '/v1/posts', { body: { projectId: project.id } }), 403, 'scope_missing');
    assert.equal(err.details?.required_scope, 'posts:write');
  });

  it('never lets a read scope write, and names the single missing scope', async () => {
    const { key, project } = await workspaceWithKey({ scopes: ['read'] });
    const call = client(api.url, key);
    const post = assertError(await call('POST', '/v1/posts', { body: { projectId: project.id } }), 403, 'scope_missing');
    assert.deepEqual(post.details, { required_scope: 'posts:write' });
    const note = assertError(await call('POST', '/v1/notes', { body: { projectId: project.id, content: 'x' } }), 403, 'scope_missing');
    assert.deepEqual(note.details, { required_scope: 'notes:write' });
    // and reads work with the alias
    assert.equal((await call('GET', `/v1/notes?projectId=${project.id}`)).status, 200);
  });

  it('does not let notes:write read posts (implication is per resource)', async () => {
    const { key, project } = await workspaceWithKey({ scopes: ['notes:write'] });
    const err = assertError(await client(api.url, key)('GET', `/v1/posts?projectId=${project.id}`), 403, 'scope_missing');
    assert.equal(err.details?.required_scope, 'posts:read');
  });

  it('names the scope when exactly one of several is missing, and none when two are', async () => {
    const one = await workspaceWithKey({ scopes: ['notes:read'] });
    const e1 = assertError(await client(api.url, one.key)('GET', '/v1/__test/all-of'), 403, 'scope_missing');
    assert.deepEqual(e1.details, { required_scope: 'knowledge:read' });

    const none = await workspaceWithKey({ scopes: ['posts:read'] });
    const e2 = assertError(await client(api.url, none.key)('GET', '/v1/__test/all-of'), 403, 'scope_missing');
    assert.equal(e2.details, undefined);

    const both = await workspaceWithKey({ scopes: ['notes:write', 'knowledge:write'] });
    assert.equal((await client(api.url, both.key)('GET', '/v1/__test/all-of')).status, 200, 'write implies read for both');
  });

  it('carries no details on a refused group alternative', async () => {
    const none = await workspaceWithKey({ scopes: ['read'] });
    const err = assertError(await client(api.url, none.key)('GET', '/v1/__test/any-of'), 403, 'scope_missing');
    assert.equal(err.details, undefined);
    const either = await workspaceWithKey({ scopes: ['knowledge:write'] });
    assert.equal((await client(api.url, either.key)('GET', '/v1/__test/any-of')).status, 200);
  });

  it('stores the read and write aliases expanded and de-duplicated', async () => {
    const r = await workspaceWithKey({ scopes: ['read'] });
    const meR = await client(api.url, r.key)('GET', '/v1/workspaces/me');
    assert.deepEqual(meR.body.data.principal.scopes, [...READ_SCOPES]);

    const rw = await workspaceWithKey({ scopes: ['read', 'write', 'posts:read', 'write'] });
    const scopes: string[] = (await client(api.url, rw.key)('GET', '/v1/workspaces/me')).body.data.principal.scopes;
    assert.deepEqual(scopes, [...READ_SCOPES, ...WRITE_SCOPES]);
    assert.equal(new Set(scopes).size, scopes.length);
    for (const never of ['posts:publish', 'settings:write', 'posts:destroy', 'read', 'write'])
      assert.ok(!(scopes as string[]).includes(never), never);
  });

  it('requires workspace:read for /v1/workspaces/context and /v1/team but no scope for /v1/workspaces/me', async () => {
    const { key } = await workspaceWithKey({ scopes: ['posts:read'] });
    const call = client(api.url, key);
    assert.equal((await call('GET', '/v1/workspaces/me')).status, 200);
    assert.equal((await call('GET', '/v1/projects')).status, 200);
    assert.equal(assertError(await call('GET', '/v1/workspaces/context'), 403, 'scope_missing').details?.required_scope, 'workspace:read');
    assert.equal(assertError(await call('GET', '/v1/team'), 403, 'scope_missing').details?.required_scope, 'workspace:read');
  });
});
