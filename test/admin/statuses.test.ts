// Custom post statuses from the operator CLI (issue 29 item 7): list, create in a category,
// rename, choose a category's default; GET /v1/post-statuses and PATCH statusCategory follow.

import assert from 'node:assert/strict';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { fails, ok } from '../support/admin';

describe('operator CLI: post statuses (bin/admin post-status ...)', function () {
  this.timeout(300_000);
  const api = useApi();

  it('creates a status in a category, renames it, makes it the default; the API and posts follow', async () => {
    const ws = await workspaceWithKey();
    const call = client(api.url, ws.key);
    const w = ws.workspace.id;
    const initial = await ok(['post-status', 'list', '--workspace', w]);
    assert.deepEqual(
      initial.map((s: any) => [s.category, s.isDefault]),
      ['suggested', 'draft', 'inProgress', 'review', 'scheduled', 'published'].map((c) => [c, true]),
    );

    const legal = await ok(['post-status', 'create', '--workspace', w, '--category', 'review', '--title', 'Legal review']);
    assert.match(legal.id, /^pst_/);
    assert.deepEqual([legal.title, legal.category, legal.isDefault, legal.postCount], ['Legal review', 'review', false, 0]);
    // Listed with its category, before the later categories.
    const listed = (await ok(['post-status', 'list', '--workspace', w])).map((s: any) => s.title);
    assert.deepEqual(listed, ['Suggested', 'Draft', 'In progress', 'In review', 'Legal review', 'Scheduled', 'Published']);

    const renamed = await ok(['post-status', 'rename', '--status', legal.id, '--title', 'Legal sign-off']);
    assert.equal(renamed.title, 'Legal sign-off');

    const [before] = await ok(['post', 'create', '--workspace', w, '--project', ws.project.id, '--status-category', 'review']);
    assert.notEqual(before.statusId, legal.id);
    const made = await ok(['post-status', 'set-default', '--status', legal.id]);
    assert.equal(made.isDefault, true);
    const api1 = await call('GET', '/v1/post-statuses');
    assert.equal(api1.status, 200, JSON.stringify(api1.body));
    const review = api1.body.data.filter((s: any) => s.category === 'review');
    assert.deepEqual(
      review.map((s: any) => [s.title, s.isDefault]),
      [
        ['In review', false],
        ['Legal sign-off', true],
      ],
    );
    // statusCategory now moves a post to the new default; the post moved earlier stays where it is.
    const moved = await call('PATCH', `/v1/posts/${before.id}`, { body: { statusCategory: 'draft' } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    const back = await call('PATCH', `/v1/posts/${before.id}`, { body: { statusCategory: 'review' } });
    assert.deepEqual([back.body.data.statusId, back.body.data.statusTitle], [legal.id, 'Legal sign-off']);

    const defaultReview = await ok([
      'post-status',
      'create',
      '--workspace',
      w,
      '--category',
      'review',
      '--title',
      'Final check',
      '--default',
    ]);
    assert.equal(defaultReview.isDefault, true);
    const after = (await ok(['post-status', 'list', '--workspace', w])).filter((s: any) => s.category === 'review' && s.isDefault);
    assert.deepEqual(
      after.map((s: any) => s.id),
      [defaultReview.id],
      'one default per category',
    );

    await fails(
      ['post-status', 'create', '--workspace', w, '--category', 'review', '--title', 'legal SIGN-OFF'],
      1,
      /already has a status titled/,
    );
    await fails(['post-status', 'rename', '--status', legal.id, '--title', 'x'.repeat(121)], 1, /1 to 120 characters/);
    await fails(['post-status', 'rename', '--status', legal.id, '--title', '   '], 2, /--title is required/);
    await fails(
      ['post-status', 'create', '--workspace', w, '--category', 'archive', '--title', 'Old'],
      2,
      /--category must be one of suggested/,
    );
    await fails(['post-status', 'set-default', '--status', 'pst_missing'], 1, /no post status pst_missing/);
    await fails(
      ['post-status', 'create', '--workspace', 'org_missing', '--category', 'draft', '--title', 'X'],
      1,
      /no workspace org_missing/,
    );
  });
});
