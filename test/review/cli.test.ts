import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { client, useApi } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { connectedPersonalProject } from '../support/network';
import { fails, ok } from '../support/admin';

// Operators toggle the review gate and the review / engagement settings with bin/admin
// (docs/review.md "The gate", docs/engagement.md), run as operators run it: a separate process.

describe('bin/admin workspace set (review gate, default reviewer, engagement comments)', function () {
  this.timeout(120_000);
  const api = useApi();

  it('--require-review true refuses to schedule an unapproved post; false lets it through', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const call = client(api.url, ws.key);
    const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'Gate' } })).body.data.id;
    const later = new Date(Date.now() + 86_400_000).toISOString();

    const on = await ok(['workspace', 'set', '--workspace', ws.workspace.id, '--require-review', 'true']);
    assert.equal(on.requireReviewWorkflow, true);
    const refused = await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: later } });
    assert.equal(refused.status, 409);
    assert.deepEqual([refused.body.error.code, refused.body.error.details.reason], ['conflict', 'review_required']);
    assert.equal((await call('GET', `/v1/posts/${id}`)).body.data.status, 'draft', 'unchanged');

    await ok(['workspace', 'set', '--workspace', ws.workspace.id, '--require-review', 'false']);
    assert.equal((await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: later } })).status, 200);

    await fails(
      ['workspace', 'set', '--workspace', ws.workspace.id, '--require-review', 'maybe'],
      2,
      /--require-review must be one of true, false/,
    );
    await fails(['workspace', 'set', '--workspace', ws.workspace.id], 2, /give --require-review/);
  });

  it('--default-reviewer must be a member; --engagement-comment replaces the list, "-" restores the built-in one', async () => {
    const ws = await workspaceWithKey();
    const reviewer = await member(ws.workspace.id, 'Member');
    const set = await ok(['workspace', 'set', '--workspace', ws.workspace.id, '--default-reviewer', reviewer.id]);
    assert.equal(set.defaultReviewerUserId, reviewer.id);
    await fails(['workspace', 'set', '--workspace', ws.workspace.id, '--default-reviewer', 'usr_nobody'], 1, /not a member/);
    const comments = await ok([
      'workspace',
      'set',
      '--workspace',
      ws.workspace.id,
      '--engagement-comment',
      'Well said.',
      '--engagement-comment',
      'Worth a read.',
    ]);
    assert.deepEqual(comments.engagementComments, ['Well said.', 'Worth a read.']);
    await ok(['workspace', 'set', '--workspace', ws.workspace.id, '--engagement-comment', '-']);
    assert.equal((await db()('workspaces').where({ id: ws.workspace.id }).first('engagement_comments')).engagement_comments, null);
  });
});
