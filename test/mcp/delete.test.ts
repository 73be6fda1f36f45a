import assert from 'node:assert/strict';
import { issueApiKey } from '../../admin/provision';
import { db } from '../../lib/db';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { mintDeleteConfirmation, readDeleteConfirmation } from '../../lib/tokens';
import { workspaceWithKey } from '../support/factories';
import { connectedPersonalProject, simulator } from '../support/network';
import { connect, fails, ok, rest, TRANSPORTS, useMcpStack } from '../support/mcp';
import { waitFor } from '../support/wait';
import { useTestWorker } from '../support/worker';

// spec 3.1 / 4.9 delete_post: two-phase, posts:destroy, soft delete, post.deleted; a scheduled
// post never publishes afterwards; a published one stays live on the network.

const DESTROY = ['read', 'write', 'posts:destroy'];

describe('MCP delete_post', function () {
  this.timeout(90_000);
  const stack = useMcpStack();

  for (const kind of TRANSPORTS) {
    it(`previews, then deletes with the confirmation token (${kind})`, async () => {
      const ws = await workspaceWithKey({ scopes: DESTROY });
      const client = await connect(kind, stack.mcpUrl, ws.key);
      const post = (await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'To be removed' })).data;

      const preview = (await ok(client, 'delete_post', { postId: post.id })).data;
      assert.equal(preview.wouldDelete, true);
      assert.equal(preview.post.id, post.id);
      assert.equal(preview.post.content, 'To be removed');
      assert.equal(preview.cancelsScheduledPublish, false);
      assert.equal(preview.networkCopy, 'none');
      assert.match(preview.confirmationToken, /^pdc1\./);
      assert.ok(Date.parse(preview.confirmationExpiresAt) > Date.now());
      // The first phase changes nothing.
      assert.equal((await ok(client, 'get_post', { postId: post.id })).data.id, post.id);

      const deleted = (await ok(client, 'delete_post', { postId: post.id, confirmationToken: preview.confirmationToken })).data;
      assert.deepEqual(
        { ...deleted, deletedAt: undefined },
        {
          id: post.id,
          deleted: true,
          deletedAt: undefined,
          statusAtDeletion: 'draft',
          cancelsScheduledPublish: false,
          networkCopy: 'none',
          analyticsHistoryKept: false,
        },
      );
      await fails(client, 'get_post', { postId: post.id }, 'not_found');
      assert.equal((await ok(client, 'list_posts', { projectId: ws.project.id })).data.length, 0);
      assert.equal((await rest(stack.apiUrl, ws.key)('GET', `/v1/posts/${post.id}`)).status, 404);
      // Soft: the row stays, marked.
      const row = await db()('posts').where({ id: post.id }).first();
      assert.ok(row.deleted_at);
      // spec 6: post.deleted, in the outbox with the change.
      const events = await db()('outbox_events').where({ workspace_id: ws.workspace.id, type: 'post.deleted' });
      assert.equal(events.length, 1);
      assert.equal(events[0].data.post.id, post.id);
      // A retried confirmation answers the same delete; a new preview finds nothing.
      assert.deepEqual((await ok(client, 'delete_post', { postId: post.id, confirmationToken: preview.confirmationToken })).data, deleted);
      await fails(client, 'delete_post', { postId: post.id }, 'not_found');
      assert.equal((await db()('outbox_events').where({ workspace_id: ws.workspace.id, type: 'post.deleted' })).length, 1);
      await client.close();
    });
  }

  it('binds the token to the post, the credential and the post as previewed; it expires', async () => {
    const ws = await workspaceWithKey({ scopes: DESTROY });
    const client = await connect('streamable', stack.mcpUrl, ws.key);
    const a = (await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'A' })).data;
    const b = (await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'B' })).data;
    const token = (await ok(client, 'delete_post', { postId: a.id })).data.confirmationToken as string;

    assert.equal(
      (await fails(client, 'delete_post', { postId: b.id, confirmationToken: token }, 'unprocessable')).details.reason,
      'confirmation_invalid',
    );
    assert.equal(
      (await fails(client, 'delete_post', { postId: a.id, confirmationToken: `${token}x` }, 'unprocessable')).details.reason,
      'confirmation_invalid',
    );
    const sameWorkspace = await connect(
      'streamable',
      stack.mcpUrl,
      (await issueApiKey({ workspaceId: ws.workspace.id, scopes: DESTROY })).key,
    );
    assert.equal(
      (await fails(sameWorkspace, 'delete_post', { postId: a.id, confirmationToken: token }, 'unprocessable')).details.reason,
      'confirmation_invalid',
    );
    await sameWorkspace.close();

    // Expired: the same claims, re-signed with an expiry in the past.
    const { expiresAt: _, ...claims } = (await readDeleteConfirmation(token))!;
    const { token: expired } = await mintDeleteConfirmation(claims, -2000);
    assert.equal(
      (await fails(client, 'delete_post', { postId: a.id, confirmationToken: expired }, 'unprocessable')).details.reason,
      'confirmation_expired',
    );

    // The post changed since the preview: the preview no longer says what would happen.
    // (A board move is a label, spec 3.1: even to published it leaves `status` alone, and only
    // the scheduler publishes.)
    const relabelled = await ok(client, 'update_post', { postId: a.id, statusCategory: 'published' });
    assert.equal(relabelled.data.statusCategory, 'published');
    assert.equal(relabelled.data.status, 'draft');
    await ok(client, 'update_post', { postId: a.id, statusCategory: 'inProgress' });
    await db()('posts').where({ id: a.id }).update({ status: 'published' });
    const changed = await fails(client, 'delete_post', { postId: a.id, confirmationToken: token }, 'conflict');
    assert.equal(changed.details.reason, 'post_changed');
    assert.equal((await ok(client, 'get_post', { postId: a.id })).data.id, a.id, 'nothing was deleted');
    await client.close();
  });

  it('needs posts:destroy, which write does not imply; a post of another workspace is not_found', async () => {
    const ws = await workspaceWithKey({ scopes: ['read', 'write'] });
    const client = await connect('streamable', stack.mcpUrl, ws.key);
    const post = (await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'Safe' })).data;
    const refused = await fails(client, 'delete_post', { postId: post.id }, 'scope_missing');
    assert.equal(refused.details.required_scope, 'posts:destroy');
    const other = await workspaceWithKey({ scopes: DESTROY });
    const stranger = await connect('streamable', stack.mcpUrl, other.key);
    await fails(stranger, 'delete_post', { postId: post.id }, 'not_found');
    await stranger.close();
    await client.close();
  });

  describe('with the publisher running', () => {
    useTestWorker();

    it('a deleted scheduled post never publishes; a published post stays live on the network', async () => {
      const ws = await workspaceWithKey({ scopes: DESTROY, projects: 0 });
      const { project } = await connectedPersonalProject(ws.workspace.id);
      const client = await connect('streamable', stack.mcpUrl, ws.key);
      const at = new Date(Date.now() + 5_000).toISOString();
      const doomed = (await ok(client, 'create_post_draft', { projectId: project.id, content: 'Never goes out', scheduledFor: at })).data;
      const control = (await ok(client, 'create_post_draft', { projectId: project.id, content: 'Goes out', scheduledFor: at })).data;

      const preview = (await ok(client, 'delete_post', { postId: doomed.id })).data;
      assert.equal(preview.cancelsScheduledPublish, true);
      const deleted = (await ok(client, 'delete_post', { postId: doomed.id, confirmationToken: preview.confirmationToken })).data;
      assert.equal(deleted.statusAtDeletion, 'scheduled');
      assert.equal(deleted.cancelsScheduledPublish, true);

      // The publish workflow was told and ends without publishing.
      const result = await (await temporalClient()).workflow.getHandle(workflowIds.publish(doomed.id)).result();
      assert.deepEqual(result, { outcome: 'not_scheduled' });
      // The control post publishes at that time; the deleted one is not on the network.
      const sim = simulator();
      await waitFor(
        async () => (await db()('posts').where({ id: control.id }).first()).status === 'published',
        30_000,
        'control published',
      );
      assert.equal((await sim.listPosts({ reference: doomed.id })).posts.length, 0);
      assert.equal(
        (await db()('posts').where({ id: doomed.id }).first()).status,
        'scheduled',
        'the row was left as it was, only marked deleted',
      );
      assert.equal(await db()('calendar_slots').where({ post_id: doomed.id }).first(), undefined);

      // Deleting the published control post removes only the service's copy.
      const p2 = (await ok(client, 'delete_post', { postId: control.id })).data;
      assert.equal(p2.networkCopy, 'stays_live');
      assert.equal(p2.analyticsHistoryKept, true);
      assert.equal(p2.cancelsScheduledPublish, false);
      const gone = (await ok(client, 'delete_post', { postId: control.id, confirmationToken: p2.confirmationToken })).data;
      assert.equal(gone.networkCopy, 'stays_live');
      const urn = (await db()('posts').where({ id: control.id }).first()).network_post_urn;
      assert.ok(await sim.getPost(urn), 'still live on the network');
      await client.close();
    });
  });
});
