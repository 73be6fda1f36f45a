import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { client } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { agentToken, useOAuthApi } from '../oauth/support';

// spec 5.4: a Client-role token reads the client view, posts in review, scheduled or published,
// by board column (a PATCH statusCategory move only relabels the post, spec 3.1) or by legacy
// status. Every reader of that view agrees (CONVENTIONS.md habit 16): the post list, one post,
// the post statuses with their counts and the calendar.

describe('the client view (spec 5.4): list, get, post statuses and calendar agree', function () {
  this.timeout(60_000);
  const api = useOAuthApi();

  async function boardWorkspace() {
    const ws = await workspaceWithKey({ projects: 1 });
    const admin = client(api.url, ws.key);
    const projectId = ws.project.id;
    const create = async (body: Record<string, unknown>) => {
      const res = await admin('POST', '/v1/posts', { body: { projectId, ...body } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data.id as string;
    };
    const move = async (postId: string, statusCategory: string) => {
      const res = await admin('PATCH', `/v1/posts/${postId}`, { body: { statusCategory } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.statusCategory, statusCategory);
      return res.body.data;
    };
    const ids = {
      // A draft moved to the review column: still `draft` by its legacy status.
      review: await create({ content: 'moved to review', title: 'For review' }),
      // A draft moved to the in-progress column: outside the view.
      inProgress: await create({ content: 'moved to in progress', title: 'Working' }),
      // A scheduled post moved to the draft column: in the view by its legacy status.
      scheduledInDraftColumn: await create({ content: 'scheduled, draft column', scheduledFor: '2031-03-04T10:00:00Z' }),
    };
    assert.equal((await move(ids.review, 'review')).status, 'draft', 'a board move keeps the legacy status');
    assert.equal((await move(ids.inProgress, 'inProgress')).status, 'draft');
    assert.equal((await move(ids.scheduledInDraftColumn, 'draft')).status, 'scheduled');
    // The two drafts hold calendar slots on the same day, so the calendar has a reason to show both.
    for (const postId of [ids.review, ids.inProgress])
      await db()('calendar_slots').insert({
        id: newId('slot'),
        workspace_id: ws.workspace.id,
        project_id: projectId,
        date: '2031-03-04T09:00:00Z',
        content_type: 'EDUCATIONAL',
        post_id: postId,
      });
    const user = await member(ws.workspace.id, 'Client', [projectId]);
    const token = (await agentToken(api.url, { email: user.email, scope: 'read', access: 'read', workspace: ws.workspace.id }))
      .access_token;
    return { ...ws, admin, asClient: client(api.url, token), ids };
  }

  it('a post moved to the review column by PATCH statusCategory is read; one in the in-progress column is not', async () => {
    const w = await boardWorkspace();
    const c = w.asClient;

    // The list.
    const list = await c('GET', `/v1/posts?projectId=${w.project.id}`);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(list.body.data.map((p: { id: string }) => p.id).sort(), [w.ids.review, w.ids.scheduledInDraftColumn].sort());

    // One post.
    const got = await c('GET', `/v1/posts/${w.ids.review}`);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.equal(got.body.data.status, 'draft');
    assert.equal((await c('GET', `/v1/posts/${w.ids.scheduledInDraftColumn}`)).status, 200);
    assertError(await c('GET', `/v1/posts/${w.ids.inProgress}`), 404, 'not_found');

    // The post statuses: the view's columns, with the counts of the posts the client reads.
    const statuses = await c('GET', '/v1/post-statuses');
    assert.equal(statuses.status, 200, JSON.stringify(statuses.body));
    const counts = Object.fromEntries(statuses.body.data.map((s: { category: string; postCount: number }) => [s.category, s.postCount]));
    assert.deepEqual(counts, { review: 1, scheduled: 0, published: 0 });
    // The admin's key sees every column and every post.
    const all = await w.admin('GET', '/v1/post-statuses');
    const allCounts = Object.fromEntries(all.body.data.map((s: { category: string; postCount: number }) => [s.category, s.postCount]));
    assert.deepEqual(allCounts, { suggested: 0, draft: 1, inProgress: 1, review: 1, scheduled: 0, published: 0 });

    // The calendar: the reviewed draft's slot and the scheduled post; not the in-progress draft.
    const cal = await c('GET', `/v1/calendar?projectId=${w.project.id}&from=2031-03-04&to=2031-03-04`);
    assert.equal(cal.status, 200, JSON.stringify(cal.body));
    assert.deepEqual(
      cal.body.data.entries.map((e: { type: string; id: string }) => [e.type, e.id]).sort(),
      [
        ['draft', w.ids.review],
        ['post', w.ids.scheduledInDraftColumn],
      ].sort(),
    );
    const adminCal = await w.admin('GET', `/v1/calendar?projectId=${w.project.id}&from=2031-03-04&to=2031-03-04`);
    assert.equal(adminCal.body.data.entries.length, 3);

    // Moved on to the in-progress column, the post leaves every reader of the view at once.
    const moved = await w.admin('PATCH', `/v1/posts/${w.ids.review}`, { body: { statusCategory: 'inProgress' } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.deepEqual(
      (await c('GET', `/v1/posts?projectId=${w.project.id}`)).body.data.map((p: { id: string }) => p.id),
      [w.ids.scheduledInDraftColumn],
    );
    assertError(await c('GET', `/v1/posts/${w.ids.review}`), 404, 'not_found');
    const after = (await c('GET', '/v1/post-statuses')).body.data;
    assert.equal(after.find((s: { category: string }) => s.category === 'review').postCount, 0);
    assert.deepEqual(
      (await c('GET', `/v1/calendar?projectId=${w.project.id}&from=2031-03-04&to=2031-03-04`)).body.data.entries.map(
        (e: { id: string }) => e.id,
      ),
      [w.ids.scheduledInDraftColumn],
    );
  });
});
