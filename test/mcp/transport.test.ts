import assert from 'node:assert/strict';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { issueApiKey, revokeApiKey } from '../../admin/provision';
import { toolScopeRules } from '../../api/mcp/tool';
import { TOOLS } from '../../api/mcp/tools/index';
import { redis } from '../../lib/redis';
import { challengeParams } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { startApiProcess, type ApiProcess } from '../support/foundation';
import { callTool, connect, ok, rerouting, rest, sessionIdOf, TRANSPORTS, useMcpStack } from '../support/mcp';

// spec 4.9 transport: both endpoints, the bearer challenge, discovery, sessions bound to their
// credential, and sessions that work across API processes (Redis).

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

async function rawMcp(mcpUrl: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${mcpUrl}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* an SSE body */
  }
  return { status: res.status, headers: res.headers, text, json };
}

describe('MCP transport', function () {
  this.timeout(60_000);
  const stack = useMcpStack();

  describe('discovery and the bearer challenge', () => {
    it('serves RFC 9728 metadata for {mcp_url} pointing at the API authorization server', async () => {
      for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
        const res = await fetch(stack.mcpUrl + path);
        assert.equal(res.status, 200);
        const md = (await res.json()) as Record<string, any>;
        assert.equal(md.resource, stack.mcpUrl);
        assert.deepEqual(md.authorization_servers, [stack.apiUrl]);
        assert.deepEqual(md.bearer_methods_supported, ['header']);
        for (const s of ['posts:read', 'posts:write', 'posts:generate', 'posts:destroy', 'jobs:cancel', 'offline_access'])
          assert.ok(md.scopes_supported.includes(s), s);
        assert.ok(!md.scopes_supported.includes('webhooks:manage'), 'no tool needs webhooks:manage');
      }
      // The authorization server it names answers RFC 8414 discovery.
      const as = await fetch(`${stack.apiUrl}/.well-known/oauth-authorization-server`);
      assert.equal(((await as.json()) as any).issuer, stack.apiUrl);
    });

    it("scopes_supported lists every scope a registered tool needs, its own and its operation's (derived from the registry)", async () => {
      const md = (await (await fetch(`${stack.mcpUrl}/.well-known/oauth-protected-resource`)).json()) as Record<string, any>;
      const needed = new Set<string>();
      for (const tool of TOOLS) {
        for (const rule of toolScopeRules(tool))
          if (rule !== 'any') ('allOf' in rule ? rule.allOf : rule.anyOf).forEach((x) => needed.add(x));
      }
      // Rules the tools state only through their operation count too (notes, posts).
      for (const s of [
        'notes:read',
        'notes:write',
        'posts:read',
        'posts:write',
        'posts:destroy',
        'workspace:read',
        'projects:read',
        'jobs:read',
        'jobs:cancel',
        'posts:generate',
      ])
        assert.ok(needed.has(s), s);
      for (const s of needed) assert.ok(md.scopes_supported.includes(s), `${s} is needed by a tool`);
      assert.deepEqual([...md.scopes_supported].sort(), [...needed, 'offline_access'].sort(), 'and nothing no tool needs');
      // The 401 challenge hints the same list.
      const res = await rawMcp(stack.mcpUrl, INIT);
      assert.deepEqual(challengeParams(res.headers.get('www-authenticate')).scope!.split(' ').sort(), [...md.scopes_supported].sort());
    });

    it('answers 401 with resource_metadata and a scope hint when no credential is sent, on every endpoint', async () => {
      const post = await rawMcp(stack.mcpUrl, INIT);
      const sse = await fetch(`${stack.mcpUrl}/sse`, { headers: { Accept: 'text/event-stream' } });
      const message = await fetch(`${stack.mcpUrl}/message?sessionId=x`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      for (const res of [post, sse, message]) {
        assert.equal(res.status, 401);
        const p = challengeParams(res.headers.get('www-authenticate'));
        assert.equal(p.resource_metadata, `${stack.mcpUrl}/.well-known/oauth-protected-resource`);
        assert.equal(p.error, undefined, 'RFC 6750 3.1: no error code when no credential was sent');
        assert.ok(p.scope!.split(' ').includes('posts:read'));
      }
      assert.equal(post.json.error.data.code, 'unauthenticated');
      assert.match(post.json.error.data.requestId, /^req_/);
    });

    it('answers 401 error="invalid_token" for an unknown OAuth token or API key', async () => {
      for (const token of [`svc_oat_${'x'.repeat(43)}`, 'svc_sk_live_nope', 'garbage']) {
        const res = await rawMcp(stack.mcpUrl, INIT, { Authorization: `Bearer ${token}` });
        assert.equal(res.status, 401, token);
        assert.equal(challengeParams(res.headers.get('www-authenticate')).error, 'invalid_token');
        assert.equal(res.json.error.data.code, 'invalid_token');
      }
    });

    it('refuses a plan without API access with 403 plan_not_eligible', async () => {
      const ws = await workspaceWithKey({ plan: 'STARTER' });
      const res = await rawMcp(stack.mcpUrl, INIT, { Authorization: `Bearer ${ws.key}` });
      assert.equal(res.status, 403);
      assert.equal(res.json.error.data.code, 'plan_not_eligible');
    });
  });

  for (const kind of TRANSPORTS) {
    describe(`over ${kind}`, () => {
      it('lists the tools of spec 4.9 that have a REST twin, with their annotations', async () => {
        const ws = await workspaceWithKey();
        const client = await connect(kind, stack.mcpUrl, ws.key);
        const { tools } = await client.listTools();
        const byName = new Map(tools.map((t) => [t.name, t]));
        const reads = [
          'get_workspace',
          'get_workspace_context',
          'list_team',
          'get_usage',
          'list_workspaces',
          'list_projects',
          'get_project',
          'list_notes',
          'get_note',
          'list_posts',
          'get_post',
          'list_post_statuses',
          'list_jobs',
          'get_job',
          'get_source',
          // planning: ideas, calendar, company pages, analytics
          'list_ideas',
          'get_idea',
          'list_calendar',
          'list_company_pages',
          'get_analytics_overview',
          'list_post_analytics',
          'search_viral_posts',
          'get_cross_workspace_analytics',
          // media
          'list_media',
          'get_media',
          // review before publishing (docs/review.md)
          'list_posts_awaiting_review',
          // knowledge (docs/knowledge.md)
          'get_knowledge_document',
          'search_knowledge_base',
        ];
        const writes = [
          'create_note',
          'create_post_draft',
          'update_post',
          'schedule_post',
          'cancel_job',
          'generate_post',
          'switch_workspace',
          'create_idea',
          'update_idea',
          'create_upload_url',
          'import_media',
          'set_post_media',
          'generate_image',
          'create_source_text',
          'create_source_file',
          'request_post_review',
          'approve_post',
          'reject_post',
          'add_to_knowledge_base',
        ];
        assert.deepEqual([...byName.keys()].sort(), [...reads, ...writes, 'delete_post'].sort());
        for (const name of reads) assert.equal(byName.get(name)!.annotations?.readOnlyHint, true, name);
        for (const name of writes) {
          assert.equal(byName.get(name)!.annotations?.readOnlyHint, false, name);
          assert.equal(byName.get(name)!.annotations?.destructiveHint, false, name);
        }
        assert.equal(byName.get('delete_post')!.annotations?.destructiveHint, true);
        // Default-project tools do not require projectId; API-facing schemas are strict.
        assert.ok(!(byName.get('list_posts')!.inputSchema.required ?? []).includes('projectId'));
        assert.deepEqual(byName.get('get_post')!.inputSchema.required, ['postId']);
        assert.equal((byName.get('create_post_draft')!.inputSchema as any).additionalProperties, false);
        assert.ok((byName.get('create_post_draft')!.inputSchema.properties as any).idempotencyKey);
        await client.close();
      });

      it('binds a session to its credential: another credential gets 404 as for an unknown session', async () => {
        const ws = await workspaceWithKey();
        const sameWorkspaceOtherKey = (await issueApiKey({ workspaceId: ws.workspace.id, scopes: ['read'] })).key;
        const other = await workspaceWithKey();
        const client = await connect(kind, stack.mcpUrl, ws.key);
        await ok(client, 'get_workspace');
        const sessionId = sessionIdOf(client);
        for (const token of [sameWorkspaceOtherKey, other.key]) {
          const res =
            kind === 'streamable'
              ? await rawMcp(
                  stack.mcpUrl,
                  { jsonrpc: '2.0', id: 7, method: 'tools/list' },
                  { Authorization: `Bearer ${token}`, 'Mcp-Session-Id': sessionId },
                )
              : await fetch(`${stack.mcpUrl}/message?sessionId=${encodeURIComponent(sessionId)}`, {
                  method: 'POST',
                  headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
                  body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
                }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
          assert.equal(res.status, 404);
          assert.equal(res.json.error.code, -32001);
        }
        // The owner is unaffected.
        await ok(client, 'get_workspace');
        await client.close();
      });

      it("ends a session's calls as soon as its credential is revoked", async () => {
        const ws = await workspaceWithKey();
        const client = await connect(kind, stack.mcpUrl, ws.key);
        await ok(client, 'get_workspace');
        await revokeApiKey(ws.keyId);
        await assert.rejects(callTool(client, 'get_workspace'), /401|key_revoked|revoked/);
        await client.close();
      });
    });
  }

  it('answers 404 for an unknown session and 400 for a request without one', async () => {
    const ws = await workspaceWithKey();
    const unknown = await rawMcp(
      stack.mcpUrl,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { Authorization: `Bearer ${ws.key}`, 'Mcp-Session-Id': 'nope' },
    );
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, -32001);
    const missing = await rawMcp(stack.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { Authorization: `Bearer ${ws.key}` });
    assert.equal(missing.status, 400);
    const garbled = await fetch(`${stack.mcpUrl}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${ws.key}` },
      body: '{"jsonrpc":',
    });
    assert.equal(garbled.status, 400);
    assert.equal(((await garbled.json()) as any).error.code, -32700);
  });

  it("answers a plain read call directly as JSON with the result the SDK's handler gives for the same call", async () => {
    const ws = await workspaceWithKey({ scopes: ['read', 'write'] });
    const init = await rawMcp(stack.mcpUrl, INIT, { Authorization: `Bearer ${ws.key}` });
    const session = {
      Authorization: `Bearer ${ws.key}`,
      'Mcp-Session-Id': init.headers.get('mcp-session-id')!,
      'Mcp-Protocol-Version': '2025-06-18',
    };
    const post = await rest(stack.apiUrl, ws.key)('POST', '/v1/posts', {
      projectId: ws.project.id,
      content: 'Quotes "and" \\ back\nslashes ✓',
    });
    const call = (id: number | string, meta?: Record<string, unknown>) =>
      rawMcp(
        stack.mcpUrl,
        {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'get_post', arguments: { postId: post.body.data.id }, ...(meta ? { _meta: meta } : {}) },
        },
        session,
      );
    const direct = await call('read-1');
    assert.equal(direct.status, 200);
    assert.match(direct.headers.get('content-type')!, /^application\/json/);
    assert.equal(Number(direct.headers.get('content-length')), Buffer.byteLength(direct.text));
    // A progressToken sends the same call through the SDK's transport and Server (an SSE stream).
    const viaSdk = await call(7, { progressToken: 'p' });
    assert.match(viaSdk.headers.get('content-type')!, /^text\/event-stream/);
    const sdkMessage = JSON.parse(
      viaSdk.text
        .split('\n')
        .find((l) => l.startsWith('data: {'))!
        .slice(6),
    );
    const masked = (m: any) => ({ ...m, id: null, result: { ...m.result, _meta: { ...m.result._meta, requestId: '<request>' } } });
    assert.deepEqual(masked(direct.json), masked(sdkMessage));
    assert.equal(direct.json.id, 'read-1');
    assert.equal(direct.json.result.content[0].text, JSON.stringify(direct.json.result.structuredContent));
    assert.equal(direct.json.result.structuredContent.data.content, 'Quotes "and" \\ back\nslashes ✓');
    // A tool error is answered directly too, as the same error result.
    const missing = await rawMcp(
      stack.mcpUrl,
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_post', arguments: { postId: 'post_missing' } } },
      session,
    );
    assert.match(missing.headers.get('content-type')!, /^application\/json/);
    assert.equal(missing.json.result.isError, true);
    assert.equal(missing.json.result.structuredContent.code, 'not_found');
  });

  it('DELETE /mcp ends the session', async () => {
    const ws = await workspaceWithKey();
    const client = await connect('streamable', stack.mcpUrl, ws.key);
    const transport = client.transport as StreamableHTTPClientTransport;
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    assert.equal(await redis().exists(`mcp:session:${sessionId}`), 0);
    const after = await rawMcp(
      stack.mcpUrl,
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { Authorization: `Bearer ${ws.key}`, 'Mcp-Session-Id': sessionId },
    );
    assert.equal(after.status, 404);
    await client.close();
  });

  it('honours Service-Workspace-Id when a session starts (an API key of another workspace is refused)', async () => {
    const ws = await workspaceWithKey();
    const other = await workspaceWithKey();
    const same = await connect('streamable', stack.mcpUrl, ws.key, { headers: { 'Service-Workspace-Id': ws.workspace.id } });
    assert.equal((await ok(same, 'get_workspace')).data.workspace.id, ws.workspace.id);
    await same.close();
    const res = await rawMcp(stack.mcpUrl, INIT, { Authorization: `Bearer ${ws.key}`, 'Service-Workspace-Id': other.workspace.id });
    assert.equal(res.status, 403);
    assert.equal(res.json.error.data.code, 'workspace_unavailable');
  });

  describe('with two API processes', () => {
    let second: ApiProcess;
    before(async () => {
      second = await startApiProcess();
    });
    after(async () => {
      await second?.close();
    });

    it('SSE: a /message POST reaching the process that does not hold the stream gets through (Redis)', async () => {
      const ws = await workspaceWithKey();
      // The stream is held by this process; every POST goes to the other one.
      const viaOther = rerouting(stack.mcpUrl, second.mcpUrl, (url, init) => url.pathname === '/message' && init?.method === 'POST');
      const client = await connect('sse', stack.mcpUrl, ws.key, { fetch: viaOther });
      const me = await ok(client, 'get_workspace');
      assert.equal(me.data.workspace.id, ws.workspace.id);
      const list = await ok(client, 'list_posts', { projectId: ws.project.id });
      assert.deepEqual(list.data, []);
      const failed = await callTool(client, 'get_post', { postId: 'post_missing' });
      assert.equal(failed.isError, true);
      assert.equal((failed.structuredContent as any).code, 'not_found');

      // Another credential is refused by the receiving process, before anything is forwarded.
      const otherKey = (await issueApiKey({ workspaceId: ws.workspace.id, scopes: ['read'] })).key;
      const sessionId = sessionIdOf(client);
      const res = await fetch(`${second.mcpUrl}/message?sessionId=${encodeURIComponent(sessionId)}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${otherKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      assert.equal(res.status, 404);

      await client.close();
      // The stream's end ends the session everywhere.
      const deadline = Date.now() + 5_000;
      while ((await redis().exists(`mcp:session:${sessionId}`)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const gone = await fetch(`${second.mcpUrl}/message?sessionId=${encodeURIComponent(sessionId)}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ws.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' }),
      });
      assert.equal(gone.status, 404);
    });

    it('streamable HTTP: a session started in one process continues in another', async () => {
      const ws = await workspaceWithKey();
      // initialize reaches this process; everything after it the other one.
      const afterInit = rerouting(
        stack.mcpUrl,
        second.mcpUrl,
        (url, init) => typeof init?.body === 'string' && !init.body.includes('"initialize"'),
      );
      const client = await connect('streamable', stack.mcpUrl, ws.key, { fetch: afterInit });
      const me = await ok(client, 'get_workspace');
      assert.equal(me.data.workspace.id, ws.workspace.id);
      const created = await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'Across processes' });
      const got = await ok(client, 'get_post', { postId: created.data.id });
      assert.equal(got.data.content, 'Across processes');
      // And back again: this process revives nothing, it still holds the session.
      const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
      const here = await rawMcp(
        stack.mcpUrl,
        { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'get_workspace', arguments: {} } },
        { Authorization: `Bearer ${ws.key}`, 'Mcp-Session-Id': sessionId },
      );
      assert.equal(here.status, 200);
      assert.match(here.text, new RegExp(ws.workspace.id));
      // The other process applies the credential binding too.
      const otherKey = (await issueApiKey({ workspaceId: ws.workspace.id, scopes: ['read'] })).key;
      const refused = await rawMcp(
        second.mcpUrl,
        { jsonrpc: '2.0', id: 12, method: 'tools/list' },
        { Authorization: `Bearer ${otherKey}`, 'Mcp-Session-Id': sessionId },
      );
      assert.equal(refused.status, 404);
      await client.close();
    });
  });
});
