import assert from 'node:assert/strict';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';

// spec 1 rule 1: a resource id of another workspace answers 404 not_found, never 403, on
// every read and write that takes one.

describe('workspace isolation (spec 1 rule 1)', () => {
  const api = useApi();
  let a: Awaited<ReturnType<typeof workspaceWithKey>>;
  let b: Awaited<ReturnType<typeof workspaceWithKey>>;
  let bPost: string;
  let bNote: string;
  before(async () => {
    a = await workspaceWithKey();
    b = await workspaceWithKey();
    const callB = client(api.url, b.key);
    const post = await callB('POST', '/v1/posts', { body: { projectId: b.project.id, content: 'B only' } });
    assert.equal(post.status, 200, JSON.stringify(post.body));
    bPost = post.body.data.id;
    const note = await callB('POST', '/v1/notes', { body: { projectId: b.project.id, content: 'B note' } });
    assert.equal(note.status, 200, JSON.stringify(note.body));
    bNote = note.body.data.id;
  });

  it('hides another workspace’s post, project and note behind 404', async () => {
    const callA = client(api.url, a.key);
    assertError(await callA('GET', `/v1/posts/${bPost}`), 404, 'not_found');
    assertError(await callA('GET', `/v1/projects/${b.project.id}`), 404, 'not_found');
    assertError(await callA('GET', `/v1/notes/${bNote}`), 404, 'not_found');
    assertError(await callA('GET', `/v1/posts?projectId=${b.project.id}`), 404, 'not_found');
    assertError(await callA('GET', `/v1/notes?projectId=${b.project.id}`), 404, 'not_found');
  });

  it('refuses writes into another workspace with 404 and changes nothing', async () => {
    const callA = client(api.url, a.key);
    assertError(await callA('PATCH', `/v1/posts/${bPost}`, { body: { content: 'hijacked' } }), 404, 'not_found');
    assertError(await callA('POST', '/v1/posts', { body: { projectId: b.project.id, content: 'x' } }), 404, 'not_found');
    assertError(await callA('POST', '/v1/notes', { body: { projectId: b.project.id, content: 'x' } }), 404, 'not_found');
    const still = await client(api.url, b.key)('GET', `/v1/posts/${bPost}`);
    assert.equal(still.status, 200);
    assert.equal(still.body.data.content, 'B only');
    const list = await client(api.url, b.key)('GET', `/v1/posts?projectId=${b.project.id}`);
    assert.equal(list.body.data.length, 1);
  });

  it('lists only the caller’s own projects', async () => {
    const res = await client(api.url, a.key)('GET', '/v1/projects');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.map((p: { id: string }) => p.id),
      [a.project.id],
    );
  });
});
