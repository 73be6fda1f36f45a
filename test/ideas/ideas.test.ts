import assert from 'node:assert/strict';
import { createProject, issueApiKey } from '../../admin/provision';
import { db } from '../../lib/db';
import { client } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { register, useOAuthApi, tokenFor } from '../oauth/support';

// The idea board (spec 2.9, 3.3, 4.6; create/list/get are 9.3 additions): every PATCH rule,
// the derived review/done statuses, the read/write scope rule, the client role and the
// default project of an OAuth principal. docs/ideas.md states the rules tested here.

/** An idea with every field of 2.9 a client sets. */
const EVERY_FIELD = {
  title: 'Why we ship on Fridays',
  content: 'Long form',
  pillar: 'Education',
  postType: 'carousel',
  assetFormat: 'pdf',
  hook: 'Everybody says never.',
  topic: 'release process',
  scheduledFor: '2031-05-06',
};

describe('ideas (spec 2.9, 3.3, 4.6)', () => {
  const api = useOAuthApi();
  let clientId: string;
  const redirectUri = 'https://client.example.com/cb';
  before(async () => {
    clientId = (await register(api.url, { client_name: 'Idea board client', redirect_uris: [redirectUri] })).body.client_id;
  });

  const oauth = async (email: string, opts: { workspace?: string; project?: string; scope?: string } = {}) =>
    (
      await tokenFor(api.url, {
        clientId,
        redirectUri,
        email,
        scope: opts.scope ?? 'read write',
        access: 'full',
        workspace: opts.workspace,
        project: opts.project,
      })
    ).access_token;

  async function board() {
    const ws = await workspaceWithKey({ projects: 2 });
    const call = client(api.url, ws.key);
    const create = async (body: Record<string, unknown>) => {
      const res = await call('POST', '/v1/ideas', { body: { projectId: ws.project.id, ...body } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data;
    };
    // spec 4.6: an API key has no default project, so a PATCH names the idea's project.
    const patch = (id: string, body: Record<string, unknown>) =>
      call('PATCH', `/v1/ideas/${id}`, { body: { projectId: ws.project.id, ...body } });
    return { ...ws, call, create, patch };
  }

  it('creates an idea and reads it back with every field of 2.9', async () => {
    const b = await board();
    const idea = await b.create(EVERY_FIELD);
    assert.match(idea.id, /^idea_[A-Za-z0-9]{24}$/);
    assert.deepEqual(
      { ...idea, createdAt: 'x', updatedAt: 'x' },
      { id: idea.id, projectId: b.project.id, ...EVERY_FIELD, status: 'inbox', linkedPost: null, createdAt: 'x', updatedAt: 'x' },
    );
    const got = await b.call('GET', `/v1/ideas/${idea.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.data, idea);
    assertError(await b.call('GET', `/v1/ideas/idea_${'0'.repeat(24)}`), 404, 'not_found');
    assertError(await b.call('POST', '/v1/ideas', { body: { projectId: b.project.id, title: ' ' } }), 422, 'unprocessable');
    assertError(await b.call('POST', '/v1/ideas', { body: { projectId: b.project.id, title: 't'.repeat(501) } }), 413, 'payload_too_large');
    assertError(await b.call('POST', '/v1/ideas', { body: { projectId: b.project.id, title: 'x', status: 'done' } }), 422, 'unprocessable');
    assertError(
      await b.call('POST', '/v1/ideas', { body: { projectId: b.project.id, title: 'x', scheduledFor: '2031-02-30' } }),
      422,
      'unprocessable',
    );
  });

  describe('PATCH /v1/ideas/{ideaId} (spec 4.6)', () => {
    it('changes only the fields sent; null clears a brief field; an empty string is a value', async () => {
      const b = await board();
      const idea = await b.create(EVERY_FIELD);
      const res = await b.patch(idea.id, { hook: null, topic: 'New topic' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.headers.get('idempotent-replayed'), 'false');
      assert.deepEqual({ ...res.body.data, updatedAt: idea.updatedAt }, { ...idea, hook: null, topic: 'New topic' });
      assert.ok(Date.parse(res.body.data.updatedAt) >= Date.parse(idea.updatedAt));

      const cleared = await b.patch(idea.id, { pillar: null, postType: null, assetFormat: null, topic: null, scheduledFor: null });
      assert.equal(cleared.status, 200);
      const d = cleared.body.data;
      assert.deepEqual([d.pillar, d.postType, d.assetFormat, d.hook, d.topic, d.scheduledFor], [null, null, null, null, null, null]);
      assert.equal(d.title, EVERY_FIELD.title);
      assert.equal(d.content, EVERY_FIELD.content);
      const again = await b.patch(idea.id, { title: 'Renamed', content: '', pillar: '' });
      assert.equal(again.body.data.title, 'Renamed');
      assert.equal(again.body.data.content, '');
      assert.equal(again.body.data.pillar, '');
      // What the API answered is what is stored.
      assert.deepEqual((await b.call('GET', `/v1/ideas/${idea.id}`)).body.data, again.body.data);
    });

    it('needs at least one updatable field', async () => {
      const b = await board();
      const idea = await b.create({ title: 'T' });
      const none = assertError(await b.patch(idea.id, {}), 422, 'unprocessable');
      assert.match(none.message, /at least one updatable field/);
      assertError(await b.patch(idea.id, { projectId: b.project.id }), 422, 'unprocessable');
      assertError(await b.patch(idea.id, { title: 'x', colour: 'red' }), 422, 'unprocessable');
      assertError(await b.patch(idea.id, { pillar: 42 }), 422, 'unprocessable');
      assertError(await b.patch(idea.id, { title: null }), 422, 'unprocessable');
      assert.equal((await b.call('GET', `/v1/ideas/${idea.id}`)).body.data.title, 'T');
    });

    it('writes inbox and in_production; review and done are refused', async () => {
      const b = await board();
      const idea = await b.create({ title: 'T' });
      const moved = await b.patch(idea.id, { status: 'in_production' });
      assert.equal(moved.body.data.status, 'in_production');
      const back = await b.patch(idea.id, { status: 'inbox' });
      assert.equal(back.body.data.status, 'inbox');
      for (const status of ['review', 'done', 'archived', '']) {
        const err = assertError(await b.patch(idea.id, { status }), 422, 'unprocessable');
        assert.match(err.message, /inbox.*in_production/);
      }
      assert.equal((await b.call('GET', `/v1/ideas/${idea.id}`)).body.data.status, 'inbox');
    });

    it('derives review and done from the linked post, and falls back to the stored status', async () => {
      const b = await board();
      const post = (await b.call('POST', '/v1/posts', { body: { projectId: b.project.id, content: 'Draft from an idea' } })).body.data;
      const idea = await b.create({ title: 'T' });
      // Linking a post starts production.
      const linked = await b.patch(idea.id, { linkedPostId: post.id });
      assert.equal(linked.status, 200, JSON.stringify(linked.body));
      assert.equal(linked.body.data.status, 'in_production');
      assert.deepEqual(linked.body.data.linkedPost, { id: post.id, statusCategory: 'draft' });

      // The post goes to review: the idea reads review.
      assert.equal((await b.call('PATCH', `/v1/posts/${post.id}`, { body: { statusCategory: 'review' } })).status, 200);
      let got = (await b.call('GET', `/v1/ideas/${idea.id}`)).body.data;
      assert.equal(got.status, 'review');
      assert.deepEqual(got.linkedPost, { id: post.id, statusCategory: 'review' });
      // A write of a stored status is accepted but the derived one shows while the post is in review.
      const written = await b.patch(idea.id, { status: 'inbox' });
      assert.equal(written.body.data.status, 'review');

      // Back to in progress: the stored status shows again.
      await b.call('PATCH', `/v1/posts/${post.id}`, { body: { statusCategory: 'inProgress' } });
      got = (await b.call('GET', `/v1/ideas/${idea.id}`)).body.data;
      assert.equal(got.status, 'inbox');
      assert.deepEqual(got.linkedPost, { id: post.id, statusCategory: 'inProgress' });

      // Published: done, whatever is stored.
      const published = await db()('post_statuses')
        .where({ workspace_id: b.workspace.id, category: 'published', is_default: true })
        .first('id');
      await db()('posts').where({ id: post.id }).update({ status: 'published', status_id: published.id, published_at: new Date() });
      got = (await b.call('GET', `/v1/ideas/${idea.id}`)).body.data;
      assert.equal(got.status, 'done');
      assert.deepEqual(got.linkedPost, { id: post.id, statusCategory: 'published' });
      // A legacy published post without a workspace status still reads done.
      await db()('posts').where({ id: post.id }).update({ status_id: null });
      assert.equal((await b.call('GET', `/v1/ideas/${idea.id}`)).body.data.status, 'done');

      // The post is removed: the link no longer counts.
      await db()('posts').where({ id: post.id }).update({ deleted_at: new Date() });
      got = (await b.call('GET', `/v1/ideas/${idea.id}`)).body.data;
      assert.equal(got.status, 'inbox');
      assert.equal(got.linkedPost, null);
    });

    it('unlinks with linkedPostId null and refuses a post of another project', async () => {
      const b = await board();
      const other = (await b.call('POST', '/v1/posts', { body: { projectId: b.projects[1]!.id, content: 'elsewhere' } })).body.data;
      const own = (await b.call('POST', '/v1/posts', { body: { projectId: b.project.id, content: 'own' } })).body.data;
      const idea = await b.create({ title: 'T', linkedPostId: own.id });
      assert.equal(idea.status, 'in_production');
      assertError(await b.patch(idea.id, { linkedPostId: other.id }), 422, 'unprocessable');
      assertError(await b.patch(idea.id, { linkedPostId: 'post_missing' }), 422, 'unprocessable');
      const unlinked = await b.patch(idea.id, { linkedPostId: null });
      assert.equal(unlinked.body.data.linkedPost, null);
      assert.equal(unlinked.body.data.status, 'in_production');
    });

    it("projectId: names the idea's project, defaults to the pinned project of an OAuth token, else invalid_request", async () => {
      const b = await board();
      const idea = await b.create({ title: 'T' });
      // API key: no default project.
      const missing = assertError(await b.call('PATCH', `/v1/ideas/${idea.id}`, { body: { title: 'x' } }), 400, 'invalid_request');
      assert.equal(missing.details?.field, 'projectId');
      assert.equal((await b.patch(idea.id, { projectId: b.project.id, title: 'with project' })).status, 200);
      // A project that does not hold the idea: the idea is not found there.
      assertError(await b.patch(idea.id, { projectId: b.projects[1]!.id, title: 'x' }), 404, 'not_found');
      const foreign = await workspaceWithKey();
      assertError(await b.patch(idea.id, { projectId: foreign.project.id, title: 'x' }), 404, 'not_found');
      assertError(
        await client(api.url, foreign.key)('PATCH', `/v1/ideas/${idea.id}`, { body: { projectId: foreign.project.id, title: 'x' } }),
        404,
        'not_found',
      );

      const admin = await member(b.workspace.id, 'Admin');
      const pinned = await oauth(admin.email, { workspace: b.workspace.id, project: b.project.id });
      const viaOauth = client(api.url, pinned);
      const res = await viaOauth('PATCH', `/v1/ideas/${idea.id}`, { body: { title: 'by default project' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.title, 'by default project');
      assert.equal((await viaOauth('GET', '/v1/ideas')).body.data.length, 1, 'list defaults to the pinned project too');
      const elsewhere = (await viaOauth('POST', '/v1/ideas', { body: { projectId: b.projects[1]!.id, title: 'second project' } })).body
        .data;
      assertError(await viaOauth('PATCH', `/v1/ideas/${elsewhere.id}`, { body: { title: 'x' } }), 404, 'not_found');
      assert.equal(
        (await viaOauth('PATCH', `/v1/ideas/${elsewhere.id}`, { body: { projectId: b.projects[1]!.id, title: 'x' } })).status,
        200,
      );
    });
  });

  it('lists ideas newest first, filtered by derived status, cursor-paginated', async () => {
    const b = await board();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await b.create({ title: `idea ${i}` })).id);
    await b.patch(ids[1]!, { projectId: b.project.id, status: 'in_production' });
    const post = (await b.call('POST', '/v1/posts', { body: { projectId: b.project.id, content: 'p' } })).body.data;
    await b.patch(ids[3]!, { projectId: b.project.id, linkedPostId: post.id });
    await db()('posts').where({ id: post.id }).update({ status: 'published' });
    await b.create({ title: 'other project', projectId: b.projects[1]!.id });

    const seen: string[] = [];
    let cursor: string | null = null;
    type Listed = { status: number; body: { data: Array<{ id: string }>; pagination: { next_cursor: string | null; has_more: boolean } } };
    do {
      const res: Listed = await b.call('GET', `/v1/ideas?projectId=${b.project.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.ok(res.body.data.length <= 2);
      seen.push(...res.body.data.map((i: { id: string }) => i.id));
      cursor = res.body.pagination.next_cursor;
      assert.equal(res.body.pagination.has_more, cursor !== null);
    } while (cursor);
    assert.deepEqual(seen, [...ids].reverse());

    const byStatus = async (s: string) =>
      (await b.call('GET', `/v1/ideas?projectId=${b.project.id}&status=${s}`)).body.data.map((i: { id: string }) => i.id);
    assert.deepEqual(await byStatus('done'), [ids[3]]);
    assert.deepEqual(await byStatus('in_production'), [ids[1]]);
    assert.deepEqual(await byStatus('inbox'), [ids[4], ids[2], ids[0]]);
    assert.deepEqual(await byStatus('done,in_production'), [ids[3], ids[1]]);
    assert.deepEqual(await byStatus('review'), []);
    assertError(await b.call('GET', `/v1/ideas?projectId=${b.project.id}&status=lost`), 400, 'invalid_request');
    const first = await b.call('GET', `/v1/ideas?projectId=${b.project.id}&limit=1`);
    assertError(
      await b.call('GET', `/v1/ideas?projectId=${b.project.id}&status=inbox&cursor=${first.body.pagination.next_cursor}`),
      400,
      'bad_cursor',
    );
    assertError(await b.call('GET', `/v1/ideas?projectId=${b.project.id}&limit=0`), 400, 'bad_pagination');
    assertError(await b.call('GET', '/v1/ideas'), 400, 'invalid_request');
    const foreign = await workspaceWithKey();
    assertError(await b.call('GET', `/v1/ideas?projectId=${foreign.project.id}`), 404, 'not_found');
  });

  it('scopes: ideas:write for writes and reads; a read-only credential is refused', async () => {
    const b = await board();
    const idea = await b.create({ title: 'T' });
    const readOnly = client(api.url, (await issueApiKey({ workspaceId: b.workspace.id, scopes: ['read'] })).key);
    for (const [method, path, body] of [
      ['GET', `/v1/ideas?projectId=${b.project.id}`],
      ['GET', `/v1/ideas/${idea.id}`],
      ['POST', '/v1/ideas', { projectId: b.project.id, title: 'x' }],
      ['PATCH', `/v1/ideas/${idea.id}`, { projectId: b.project.id, title: 'x' }],
    ] as const) {
      const err = assertError(await readOnly(method, path, { body }), 403, 'scope_missing');
      assert.deepEqual(err.details, { required_scope: 'ideas:write' });
    }
    const ideasOnly = client(api.url, (await issueApiKey({ workspaceId: b.workspace.id, scopes: ['ideas:write'] })).key);
    assert.equal((await ideasOnly('GET', `/v1/ideas/${idea.id}`)).status, 200);
    assert.equal((await ideasOnly('PATCH', `/v1/ideas/${idea.id}`, { body: { projectId: b.project.id, title: 'y' } })).status, 200);
  });

  it('client role (spec 5.4): every idea read and write answers forbidden_project client_role; members see assigned projects only', async () => {
    const b = await board();
    const idea = await b.create({ title: 'T' });
    const clientUser = await member(b.workspace.id, 'Client', [b.project.id]);
    const access = client(api.url, await oauth(clientUser.email, { workspace: b.workspace.id, project: b.project.id }));
    for (const [method, path, body] of [
      ['GET', `/v1/ideas?projectId=${b.project.id}`],
      ['GET', `/v1/ideas/${idea.id}`],
      ['POST', '/v1/ideas', { projectId: b.project.id, title: 'x' }],
      ['PATCH', `/v1/ideas/${idea.id}`, { title: 'x' }],
    ] as const) {
      const err = assertError(await access(method, path, { body }), 403, 'forbidden_project');
      assert.deepEqual(err.details, { reason: 'client_role' });
    }
    // A plain member assigned to the second project does not see the first one's ideas.
    const plain = await member(b.workspace.id, 'Member', [b.projects[1]!.id]);
    const memberCall = client(api.url, await oauth(plain.email, { workspace: b.workspace.id, project: b.projects[1]!.id }));
    assertError(await memberCall('GET', `/v1/ideas/${idea.id}`), 404, 'not_found');
    assertError(await memberCall('GET', `/v1/ideas?projectId=${b.project.id}`), 404, 'not_found');
    const unassigned = await createProject({ workspaceId: b.workspace.id, type: 'PERSONAL_BRAND', name: 'Unassigned' });
    assertError(await memberCall('POST', '/v1/ideas', { body: { projectId: unassigned.id, title: 'x' } }), 404, 'not_found');
  });

  it('honours Idempotency-Key on create', async () => {
    const b = await board();
    const headers = { 'Idempotency-Key': `idea-${Date.now()}` };
    const body = { projectId: b.project.id, title: 'once' };
    const first = await b.call('POST', '/v1/ideas', { body, headers });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const second = await b.call('POST', '/v1/ideas', { body, headers });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.body.data.id, first.body.data.id);
    assertError(await b.call('POST', '/v1/ideas', { body: { ...body, title: 'twice' }, headers }), 409, 'idempotency_key_conflict');
  });
});
