import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { member, workspaceWithKey } from '../support/factories';
import { agentToken } from '../oauth/support';
import { connect, fails, ok, rest, startMcpStack, type McpStack } from '../support/mcp';

// The review operations as MCP tools (docs/review.md; spec 9.3 additions, 5.4): a Client-role
// reviewer connected over OAuth sees exactly the posts awaiting its decision and decides them.

describe('review tools over MCP', function () {
  this.timeout(60_000);
  let stack: McpStack;
  const clients: Client[] = [];
  before(async () => {
    stack = await startMcpStack();
  });
  after(async () => {
    for (const c of clients) await c.close();
    await stack.close();
  });

  it('request_post_review, list_posts_awaiting_review and approve_post / reject_post by a Client-role reviewer', async () => {
    const ws = await workspaceWithKey({ projects: 1 });
    const team = await connect('streamable', stack.mcpUrl, ws.key);
    clients.push(team);
    const reviewer = await member(ws.workspace.id, 'Client', [ws.project.id]);
    const token = await agentToken(stack.apiUrl, {
      email: reviewer.email,
      scope: 'read write',
      access: 'full',
      workspace: ws.workspace.id,
      project: ws.project.id,
    });
    const asClient = await connect('streamable', stack.mcpUrl, token.access_token);
    clients.push(asClient);

    const call = rest(stack.apiUrl, ws.key);
    const a = (await call('POST', '/v1/posts', { projectId: ws.project.id, content: 'First' })).body.data.id;
    const b = (await call('POST', '/v1/posts', { projectId: ws.project.id, content: 'Second' })).body.data.id;
    const notMine = (await call('POST', '/v1/posts', { projectId: ws.project.id, content: 'Someone else reviews' })).body.data.id;
    const colleague = await member(ws.workspace.id, 'Member', [ws.project.id]);

    const requested = await ok(team, 'request_post_review', { postId: a, reviewerUserId: reviewer.id, notes: 'Numbers?' });
    assert.equal(requested.data.status, 'waitingApproval');
    assert.equal(requested.data.review.state, 'pending');
    await ok(team, 'request_post_review', { postId: b, reviewerUserId: reviewer.id });
    await ok(team, 'request_post_review', { postId: notMine, reviewerUserId: colleague.id });

    const awaiting = await ok(asClient, 'list_posts_awaiting_review');
    assert.deepEqual(awaiting.data.map((p: { id: string }) => p.id).sort(), [a, b].sort());
    // Its one write: every other write still answers client_role.
    assert.equal((await fails(asClient, 'update_post', { postId: a, content: 'x' }, 'forbidden_project')).details?.reason, 'client_role');
    assert.equal((await fails(asClient, 'approve_post', { postId: notMine }, 'forbidden_project')).details?.reason, 'not_reviewer');

    const approved = await ok(asClient, 'approve_post', { postId: a, notes: 'Fine' });
    assert.equal(approved.data.review.state, 'approved');
    const rejected = await ok(asClient, 'reject_post', { postId: b, notes: 'Tone' });
    assert.equal(rejected.data.status, 'rejected');
    assert.equal((await fails(asClient, 'approve_post', { postId: b }, 'conflict')).details?.reason, 'no_review_pending');
    assert.deepEqual((await ok(asClient, 'list_posts_awaiting_review')).data, []);
  });
});
