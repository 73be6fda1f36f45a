// Demo data through bin/admin (issue 12): notes and posts made through the API's operations, so
// a seeded scheduled post goes through the scheduling path and is published by the worker.

import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connectedPersonalProject, simulator } from '../support/network';
import { waitFor } from '../support/wait';
import { useTestWorker } from '../support/worker';
import { fails, ok } from '../support/admin';

/** `bin/admin note|post create` in one project, with further flags. */
const creating =
  (workspaceId: string, projectId: string) =>
  (noun: 'note' | 'post', ...flags: string[]) => [noun, 'create', '--workspace', workspaceId, '--project', projectId, ...flags];

describe('demo data (bin/admin note create, post create)', function () {
  this.timeout(300_000);
  const api = useApi();
  useTestWorker();

  it('creates notes with calendar slots, as the API does', async () => {
    const ws = await workspaceWithKey();
    const create = creating(ws.workspace.id, ws.project.id);
    const call = client(api.url, ws.key);
    const notes = await ok(create('note', '--count', '3', '--content-type', 'EDUCATIONAL'));
    assert.equal(notes.length, 3);
    assert.ok(
      notes.every((n: any) => /^note_/.test(n.id) && n.slot?.contentType === 'EDUCATIONAL'),
      JSON.stringify(notes),
    );
    assert.equal(new Set(notes.map((n: any) => n.content)).size, 3, 'demo texts differ');
    const listed = await call('GET', `/v1/notes?projectId=${ws.project.id}`);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.deepEqual(listed.body.data.map((n: any) => n.id).sort(), notes.map((n: any) => n.id).sort());

    const slotted = await ok(
      create('note', '--content', 'Talk about hiring', '--slot-date', '2027-03-01T09:00:00Z', '--count', '2', '--spacing-minutes', '1440'),
    );
    assert.deepEqual(
      slotted.map((n: any) => n.content),
      ['Talk about hiring', 'Talk about hiring'],
    );
    assert.deepEqual(
      slotted.map((n: any) => n.slot.date),
      ['2027-03-01T09:00:00.000Z', '2027-03-02T09:00:00.000Z'],
    );

    await fails(creating(ws.workspace.id, 'proj_missing')('note'), 1, /notes\.create refused \(not_found\)/);
    await fails(create('note', '--count', '0'), 2, /--count must be at least 1/);
  });

  it('creates drafts with a board status and content type', async () => {
    const ws = await workspaceWithKey();
    const create = creating(ws.workspace.id, ws.project.id);
    const posts = await ok(
      create('post', '--count', '2', '--status-category', 'review', '--content-type', 'BUSINESS_EXTERNAL', '--title', 'Demo'),
    );
    assert.equal(posts.length, 2);
    for (const p of posts) {
      assert.equal(p.contentType, 'BUSINESS_EXTERNAL');
      assert.equal(p.statusCategory, 'review');
      assert.equal(p.title, 'Demo');
    }
    // The board status is a label (spec 3.1, docs/publishing.md): the legacy status stays the
    // lifecycle's, as for a PATCH by a client.
    const read = await client(api.url, ws.key)('GET', `/v1/posts/${posts[0].id}`);
    assert.equal(read.body.data.status, 'draft', JSON.stringify(read.body));
    assert.equal(read.body.data.scheduledAt, null);
    await fails(create('post', '--content-type', 'POEM'), 1, /contentType/);
    await fails(create('post', '--scheduled-for', 'tomorrow'), 1, /not an ISO 8601 date-time/);
  });

  it('schedules through the API scheduling path: the post is published by the worker', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const create = creating(ws.workspace.id, project.id);
    // Far enough ahead that a slow start of bin/admin on a busy machine still schedules it in the future.
    const at = new Date(Date.now() + 15_000).toISOString();
    const [post] = await ok(create('post', '--content', 'Seeded and published', '--scheduled-for', at));
    assert.equal(post.status, 'scheduled');
    const row = await waitFor(
      async () => {
        const r = await db()('posts').where({ id: post.id }).first();
        return r.status === 'published' && r;
      },
      60_000,
      'published',
    );
    assert.ok(row.published_at);
    const { posts } = await simulator().listPosts({ reference: post.id });
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.text, 'Seeded and published');

    // The same verification as PATCH: a project whose connection is revoked cannot be scheduled.
    await ok(['connection', 'revoke', '--workspace', ws.workspace.id, '--project', project.id]);
    await fails(create('post', '--scheduled-for', new Date(Date.now() + 3_600_000).toISOString()), 1, /posts\.update refused/);
    await fails(create('post', '--scheduled-for', '2001-01-01T00:00:00Z'), 1, /posts\.update refused/);
  });
});
