import assert from 'node:assert/strict';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createProject } from '../../admin/provision';
import { agentToken, consent } from '../oauth/support';
import { member, workspaceWithKey } from '../support/factories';
import { startApiProcess } from '../support/foundation';
import { SdkHost, connect, fails, ok, rerouting, sessionIdOf, TRANSPORTS, useMcpStack } from '../support/mcp';

// OAuth on the agent transport: the MCP SDK client's own auth() flow against our
// authorization server (discovery from the 401 challenge, dynamic registration, PKCE, the
// consent page, code exchange), the default project pinned at consent (spec 4.9),
// switch_workspace (spec 4.2 reach), missing scopes as tool results (4.9), and the client-role view (5.4).

const REDIRECT = 'http://127.0.0.1:9/callback';

describe('MCP with OAuth', function () {
  this.timeout(90_000);
  const stack = useMcpStack();

  it("the SDK client's auth(): discovery, registration, PKCE, consent, token exchange, then tools on both transports", async () => {
    const ws = await workspaceWithKey({ projects: 2, name: 'Agent Workspace' });
    const user = await member(ws.workspace.id, 'Admin');
    const pinned = ws.projects[1]!;
    const provider = new SdkHost();

    const transport = new StreamableHTTPClientTransport(new URL('/mcp', stack.mcpUrl), { authProvider: provider });
    await assert.rejects(new Client({ name: 'host', version: '1' }).connect(transport), UnauthorizedError);

    // What auth() did: it found the authorization server through {mcp_url}'s metadata,
    // registered dynamically, and sent the user to /oauth/authorize with PKCE S256, the scope
    // hint of the challenge, and the resource indicator (RFC 8707).
    assert.ok(provider.clientInformation()?.client_id, 'registered');
    const url = provider.authorizationUrls[0]!;
    assert.equal(url.origin + url.pathname, `${stack.apiUrl}/oauth/authorize`);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('resource'), stack.mcpUrl);
    const requested = url.searchParams.get('scope')!.split(' ');
    for (const s of ['posts:read', 'posts:write', 'posts:destroy', 'posts:generate', 'jobs:read', 'offline_access'])
      assert.ok(requested.includes(s), s);

    // The user signs in and consents on the server's pages (HTML forms, cookies).
    const back = await consent(url, { email: user.email, project: pinned.id, access: 'full' });
    assert.equal(back.origin + back.pathname, REDIRECT);
    await transport.finishAuth(back.searchParams.get('code')!);
    assert.match(provider.tokens()!.access_token, /^svc_oat_/);
    assert.ok(provider.tokens()!.refresh_token);

    for (const kind of TRANSPORTS) {
      const client = new Client({ name: 'host', version: '1' });
      await client.connect(
        kind === 'streamable'
          ? new StreamableHTTPClientTransport(new URL('/mcp', stack.mcpUrl), { authProvider: provider })
          : new SSEClientTransport(new URL('/sse', stack.mcpUrl), { authProvider: provider }),
      );
      const me = await ok(client, 'get_workspace');
      assert.equal(me.data.workspace.id, ws.workspace.id);
      assert.equal(me.data.principal.type, 'oauth_token');
      assert.equal(me.data.principal.clientId, provider.clientInformation()!.client_id);
      assert.equal(me.data.principal.actingUserId, user.id);
      assert.deepEqual(me.data.principal.defaultProject, { id: pinned.id, name: pinned.name ?? me.data.principal.defaultProject.name });
      // Full access included the named-only scope asked for.
      const post = await ok(client, 'create_post_draft', { content: 'Through OAuth' });
      assert.equal(post.data.projectId, pinned.id, 'the default project');
      const preview = await ok(client, 'delete_post', { postId: post.data.id });
      await ok(client, 'delete_post', { postId: post.data.id, confirmationToken: preview.data.confirmationToken });
      await client.close();
    }
  });

  it('a tools/call the token is not scoped for answers the tool call with isError scope_missing (spec 4.9), not a 403 for the request', async () => {
    const ws = await workspaceWithKey();
    const user = await member(ws.workspace.id, 'Admin');
    const token = await agentToken(stack.apiUrl, { email: user.email, scope: 'read write' });
    assert.ok(!token.scope.split(' ').includes('posts:destroy'));
    for (const kind of TRANSPORTS) {
      const client = await connect(kind, stack.mcpUrl, token.access_token);
      const post = await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'Keep me' });
      const refused = await fails(client, 'delete_post', { postId: post.data.id }, 'scope_missing');
      assert.deepEqual(refused.details, { required_scope: 'posts:destroy' });
      // The session goes on: the refusal was one tool result, and the post is untouched.
      assert.equal((await ok(client, 'get_post', { postId: post.data.id })).data.content, 'Keep me');
      await client.close();
    }

    // Over the wire: HTTP 200 with a JSON-RPC result, no step-up challenge.
    const client = await connect('streamable', stack.mcpUrl, token.access_token);
    const res = await fetch(`${stack.mcpUrl}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token.access_token}`,
        'Mcp-Session-Id': sessionIdOf(client),
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'delete_post', arguments: { postId: 'post_x' } },
      }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('www-authenticate'), null);
    assert.equal(res.headers.get('cache-control'), 'no-store', 'an authenticated answer (spec 2.2)');
    const text = await res.text();
    const message = JSON.parse(text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1]!);
    assert.equal(message.result.isError, true);
    assert.equal(message.result.structuredContent.code, 'scope_missing');
    assert.equal(message.result.structuredContent.details.required_scope, 'posts:destroy');
    assert.match(message.result.structuredContent.requestId, /^req_/);
    assert.ok(message.result.structuredContent.documentationUrl);
    await client.close();
  });

  it("with the SDK's auth provider, a missing scope is a tool result (no re-authorization); a wider grant then goes through", async () => {
    const ws = await workspaceWithKey();
    const user = await member(ws.workspace.id, 'Admin');
    const provider = new SdkHost({ keepRefreshTokens: false });
    const first = new StreamableHTTPClientTransport(new URL('/mcp', stack.mcpUrl), { authProvider: provider });
    await assert.rejects(new Client({ name: 'host', version: '1' }).connect(first), UnauthorizedError);
    // The user grants read-only access.
    await first.finishAuth(
      (await consent(provider.authorizationUrls[0]!, { email: user.email, access: 'read' })).searchParams.get('code')!,
    );

    const client = new Client({ name: 'host', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', stack.mcpUrl), { authProvider: provider }));
    assert.ok((await ok(client, 'list_projects')).data.length === 1);
    const refused = await fails(client, 'create_post_draft', { projectId: ws.project.id, content: 'x' }, 'scope_missing');
    assert.equal(refused.details.required_scope, 'posts:write');
    assert.equal(provider.authorizationUrls.length, 1, 'the host was not sent to authorize again');
    await client.close();

    // The user grants write access in a new authorization; the same call then succeeds.
    const wider = await agentToken(stack.apiUrl, { email: user.email, scope: 'read write' });
    const again = await connect('streamable', stack.mcpUrl, wider.access_token);
    const created = await ok(again, 'create_post_draft', { projectId: ws.project.id, content: 'After a wider grant' });
    assert.equal(created.data.content, 'After a wider grant');
    await again.close();
  });

  describe('default project and switch_workspace', () => {
    let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
    let other: Awaited<ReturnType<typeof workspaceWithKey>>;
    let user: Awaited<ReturnType<typeof member>>;
    let token: string;
    before(async () => {
      ws = await workspaceWithKey({ projects: 2, name: 'Home' });
      other = await workspaceWithKey({ projects: 1, name: 'Elsewhere' });
      user = await member(ws.workspace.id, 'Admin');
      await member(other.workspace.id, 'Admin').then(() => undefined);
      const { addMember } = await import('../../admin/provision');
      await addMember({ workspaceId: other.workspace.id, user: user.id, role: 'admin' });
      token = (
        await agentToken(stack.apiUrl, {
          email: user.email,
          scope: 'read write posts:destroy',
          workspace: ws.workspace.id,
          project: ws.projects[1]!.id,
        })
      ).access_token;
    });

    for (const kind of TRANSPORTS) {
      it(`defaults projectId to the pinned project, never across workspaces; switch_workspace moves the session (${kind})`, async () => {
        const client = await connect(kind, stack.mcpUrl, token);
        const pinned = ws.projects[1]!.id;
        const draft = await ok(client, 'create_post_draft', { content: 'Default project' });
        assert.equal(draft.data.projectId, pinned);
        assert.equal((await ok(client, 'list_posts', {})).data[0].id, draft.data.id);
        const note = await ok(client, 'create_note', { content: 'A note' });
        assert.equal(note.data.projectId, pinned);
        const explicit = await ok(client, 'create_post_draft', { projectId: ws.projects[0]!.id, content: 'Explicit' });
        assert.equal(explicit.data.projectId, ws.projects[0]!.id, 'an explicit projectId wins');

        const before = await ok(client, 'list_workspaces');
        assert.deepEqual(
          before.data.map((w: any) => [w.id, w.isDefault, w.isActive]).sort(),
          [
            [ws.workspace.id, true, true],
            [other.workspace.id, false, false],
          ].sort(),
        );

        const switched = await ok(client, 'switch_workspace', { workspaceId: other.workspace.id });
        assert.equal(switched.data.workspace.id, other.workspace.id);
        assert.equal(switched.data.principal.defaultProject, null, 'the default project does not cross workspaces');
        assert.equal((await ok(client, 'get_workspace')).data.workspace.id, other.workspace.id);
        const after = await ok(client, 'list_workspaces');
        assert.deepEqual(
          after.data.map((w: any) => [w.id, w.isDefault, w.isActive]).sort(),
          [
            [ws.workspace.id, true, false],
            [other.workspace.id, false, true],
          ].sort(),
        );
        assert.deepEqual(
          (await ok(client, 'list_projects')).data.map((p: any) => p.id),
          [other.project.id],
        );
        await fails(client, 'list_posts', {}, 'invalid_request');
        await fails(client, 'get_post', { postId: draft.data.id }, 'not_found');
        assert.equal((await ok(client, 'list_posts', { projectId: other.project.id })).data.length, 0);

        // Same reach rules as Service-Workspace-Id: unreachable and nonexistent look alike.
        const stranger = await workspaceWithKey();
        await fails(client, 'switch_workspace', { workspaceId: stranger.workspace.id }, 'workspace_unavailable');
        await fails(client, 'switch_workspace', { workspaceId: 'org_nope' }, 'workspace_unavailable');
        assert.equal((await ok(client, 'get_workspace')).data.workspace.id, other.workspace.id, 'a refused switch changes nothing');
        await ok(client, 'switch_workspace', { workspaceId: ws.workspace.id });
        assert.equal((await ok(client, 'list_posts', {})).data[0].id, draft.data.id, 'back home, the default project applies again');
        await client.close();
      });
    }

    it('an API key has no default project and can only "switch" to its own workspace', async () => {
      const client = await connect('streamable', stack.mcpUrl, ws.key);
      const missing = await fails(client, 'list_posts', {}, 'invalid_request');
      assert.match(missing.message, /projectId/);
      await fails(client, 'switch_workspace', { workspaceId: other.workspace.id }, 'workspace_unavailable');
      assert.equal((await ok(client, 'switch_workspace', { workspaceId: ws.workspace.id })).data.workspace.id, ws.workspace.id);
      await client.close();
    });

    it('a switch made in one API process holds in the other', async () => {
      const second = await startApiProcess();
      try {
        // initialize here; switch_workspace in the other process; then read here.
        let route = true;
        const client = await connect('streamable', stack.mcpUrl, token, {
          fetch: rerouting(
            stack.mcpUrl,
            second.mcpUrl,
            (_url, init) => route && typeof init?.body === 'string' && init.body.includes('switch_workspace'),
          ),
        });
        await ok(client, 'switch_workspace', { workspaceId: other.workspace.id });
        route = false;
        assert.equal((await ok(client, 'get_workspace')).data.workspace.id, other.workspace.id);
        await client.close();
      } finally {
        await second.close();
      }
    });
  });

  it('a client-role user gets forbidden_project with details.reason client_role for everything outside the client view', async () => {
    const ws = await workspaceWithKey();
    const extra = await createProject({
      workspaceId: ws.workspace.id,
      type: 'PERSONAL_BRAND',
      name: 'Client brand',
      connection: 'connected',
    });
    const user = await member(ws.workspace.id, 'Client', [extra.id]);
    const token = await agentToken(stack.apiUrl, { email: user.email, scope: 'read write posts:destroy' });
    const client = await connect('streamable', stack.mcpUrl, token.access_token);
    assert.equal((await ok(client, 'list_projects')).data.length, 1, 'projects read normally, narrowed to the assignment');
    assert.deepEqual((await ok(client, 'list_posts', { projectId: extra.id })).data, []);
    for (const [tool, args] of [
      ['create_post_draft', { projectId: extra.id, content: 'x' }],
      ['list_notes', { projectId: extra.id }],
      ['list_jobs', {}],
      ['delete_post', { postId: 'post_x' }],
    ] as const) {
      const refused = await fails(client, tool, args, 'forbidden_project');
      assert.equal(refused.details.reason, 'client_role', tool);
    }
    await client.close();
  });
});
