import assert from 'node:assert/strict';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { db } from '../../lib/db';
import { sha256Hex } from '../../lib/crypto';
import { ok, startMcpStack, type McpStack, SdkHost } from '../support/mcp';
import { consent } from './support';
import { challengeParams } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { authorizeCode, authorizePath, Browser, pkce, register, resetOAuthRateLimits } from './support';

// Resource indicators (RFC 8707) across the authorization server and both resource servers:
// a token asked for one resource (REST at {base_url}, MCP at {mcp_url}) works there only; a
// token asked for none works on both, as tokens always did.

const REDIRECT = 'https://client.example.com/cb';
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('OAuth resource indicators (RFC 8707)', function () {
  this.timeout(90_000);
  let stack: McpStack;
  let clientId: string;
  let user: Awaited<ReturnType<typeof member>>;
  let workspaceId: string;

  before(async () => {
    await resetOAuthRateLimits();
    stack = await startMcpStack();
    const ws = await workspaceWithKey();
    workspaceId = ws.workspace.id;
    user = await member(ws.workspace.id, 'Admin');
    const reg = await register(stack.apiUrl, { client_name: 'Resource Client', redirect_uris: [REDIRECT] });
    assert.equal(reg.status, 201);
    clientId = reg.body.client_id;
  });
  after(async () => {
    await stack.close();
  });

  async function codeFor(resources: string[]) {
    const { verifier, challenge } = pkce();
    const { redirect } = await authorizeCode(stack.apiUrl, {
      clientId,
      redirectUri: REDIRECT,
      challenge,
      email: user.email,
      scope: 'read offline_access',
      resources,
    });
    const code = redirect.searchParams.get('code');
    assert.ok(code, `no code in ${redirect}`);
    return { code, verifier };
  }

  async function tokenRequest(params: Record<string, string>, resources: string[] = []) {
    const body = new URLSearchParams({ client_id: clientId, ...params });
    for (const r of resources) body.append('resource', r);
    const res = await fetch(`${stack.apiUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  const exchange = (c: { code: string; verifier: string }, resources: string[] = []) =>
    tokenRequest({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier }, resources);

  const refresh = (refreshToken: string, resources: string[] = []) =>
    tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }, resources);

  async function tokensFor(authorizeResources: string[], tokenResources: string[] = authorizeResources) {
    const res = await exchange(await codeFor(authorizeResources), tokenResources);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as { access_token: string; refresh_token: string };
  }

  function expectInvalidTarget(res: { status: number; body: any }) {
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'invalid_target');
    assert.match(res.body.error.request_id, /^req_/);
    assert.match(res.body.error.docs_url, /#invalid_target$/);
  }

  /** Where a token is accepted; a refusal must be the 401 challenge of that resource. */
  async function usableAt(token: string): Promise<{ rest: boolean; mcp: boolean }> {
    const rest = await fetch(`${stack.apiUrl}/v1/workspaces/me`, { headers: { Authorization: `Bearer ${token}` } });
    const restBody = (await rest.json()) as any;
    if (rest.status !== 200) {
      assert.equal(rest.status, 401, JSON.stringify(restBody));
      assert.equal(restBody.error.code, 'invalid_token');
      const p = challengeParams(rest.headers.get('www-authenticate'));
      assert.equal(p.resource_metadata, `${stack.apiUrl}/.well-known/oauth-protected-resource`);
      assert.equal(p.error, 'invalid_token');
    } else {
      assert.equal(restBody.data.workspace.id, workspaceId);
    }

    const mcp = await fetch(`${stack.mcpUrl}/mcp`, {
      method: 'POST',
      body: JSON.stringify(INIT),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    });
    const mcpText = await mcp.text();
    if (mcp.status !== 200) {
      assert.equal(mcp.status, 401, mcpText);
      // What makes an MCP host run its OAuth flow again, for this resource (spec 4.9).
      const p = challengeParams(mcp.headers.get('www-authenticate'));
      assert.equal(p.resource_metadata, `${stack.mcpUrl}/.well-known/oauth-protected-resource`);
      assert.equal(p.error, 'invalid_token');
      assert.ok(p.scope!.split(' ').includes('posts:read'), "the tools' scope hint");
      assert.equal(JSON.parse(mcpText).error.data.code, 'invalid_token');
      // The legacy SSE endpoint refuses it the same way.
      const sse = await fetch(`${stack.mcpUrl}/sse`, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' } });
      await sse.body?.cancel();
      assert.equal(sse.status, 401);
      assert.equal(challengeParams(sse.headers.get('www-authenticate')).error, 'invalid_token');
    }
    return { rest: rest.status === 200, mcp: mcp.status === 200 };
  }

  async function introspect(token: string) {
    const res = await fetch(`${stack.apiUrl}/oauth/introspect`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    });
    return (await res.json()) as Record<string, unknown>;
  }

  describe('/oauth/authorize and the code exchange', () => {
    it('resource = {mcp_url}: the token works on MCP and gets 401 invalid_token on REST; introspection gives aud', async () => {
      const t = await tokensFor([stack.mcpUrl]);
      assert.deepEqual(await usableAt(t.access_token), { rest: false, mcp: true });
      const info = await introspect(t.access_token);
      assert.equal(info.active, true);
      assert.equal(info.aud, stack.mcpUrl);
      const row = await db()('oauth_access_tokens')
        .where({ token_hash: sha256Hex(t.access_token) })
        .first('resource', 'family_id');
      assert.equal(row.resource, stack.mcpUrl);
      assert.equal((await db()('oauth_token_families').where({ id: row.family_id }).first('resource')).resource, stack.mcpUrl);
    });

    it('the MCP server URL (…/mcp, …/sse) and a trailing slash name the MCP resource too', async () => {
      for (const r of [`${stack.mcpUrl}/mcp`, `${stack.mcpUrl}/`, `${stack.mcpUrl}/mcp/`, `${stack.mcpUrl}/sse`]) {
        const t = await tokensFor([r]);
        assert.deepEqual(await usableAt(t.access_token), { rest: false, mcp: true }, r);
        assert.equal((await introspect(t.access_token)).aud, stack.mcpUrl, 'stored as the canonical identifier');
      }
    });

    it('resource = {base_url}: the token works on REST; on MCP it gets the 401 challenge that restarts the flow', async () => {
      const t = await tokensFor([stack.apiUrl]);
      assert.deepEqual(await usableAt(t.access_token), { rest: true, mcp: false });
      assert.equal((await introspect(t.access_token)).aud, stack.apiUrl);
      // The REST metadata names the identifier the server binds to.
      const md = (await (await fetch(`${stack.apiUrl}/.well-known/oauth-protected-resource`)).json()) as any;
      assert.equal(md.resource, stack.apiUrl);
    });

    it('no resource: the token works on both, as before, and has no aud; naming both resources is the same', async () => {
      for (const resources of [[], [stack.apiUrl, stack.mcpUrl]]) {
        const t = await tokensFor(resources);
        assert.deepEqual(await usableAt(t.access_token), { rest: true, mcp: true }, JSON.stringify(resources));
        const info = await introspect(t.access_token);
        assert.equal(info.active, true);
        assert.equal('aud' in info, false);
      }
    });

    it('an unknown or malformed resource is invalid_target on the redirect, with state and iss', async () => {
      for (const resources of [
        ['https://evil.example.com'],
        [`${stack.mcpUrl}/other`],
        [`${stack.apiUrl}/v1`],
        ['/mcp'],
        ['not a uri'],
        [`${stack.mcpUrl}#frag`],
        [stack.mcpUrl.replace('http://', 'http://user@')],
        [stack.mcpUrl, 'https://evil.example.com'],
      ]) {
        const { challenge } = pkce();
        const res = await new Browser(stack.apiUrl).request(
          'GET',
          authorizePath({ clientId, redirectUri: REDIRECT, challenge, method: 'S256', scope: 'read', resources }),
        );
        assert.equal(res.status, 303, JSON.stringify(resources));
        const loc = new URL(res.location!);
        assert.equal(`${loc.origin}${loc.pathname}`, REDIRECT);
        assert.equal(loc.searchParams.get('error'), 'invalid_target', JSON.stringify(resources));
        assert.ok(loc.searchParams.get('error_description'));
        assert.equal(loc.searchParams.get('state'), 'st-123');
        assert.equal(loc.searchParams.get('iss'), stack.apiUrl);
        assert.equal(loc.searchParams.get('code'), null);
      }
    });

    it('an unknown resource with an untrusted redirect URI is an error page, never a redirect', async () => {
      const { challenge } = pkce();
      const res = await new Browser(stack.apiUrl).request(
        'GET',
        authorizePath({
          clientId,
          redirectUri: 'https://evil.example.com/cb',
          challenge,
          method: 'S256',
          resources: ['https://evil.example.com'],
        }),
      );
      assert.equal(res.status, 400);
      assert.equal(res.location, null);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    });

    it('a token request for a resource the code was not granted for is invalid_target and leaves the code usable', async () => {
      const c = await codeFor([stack.mcpUrl]);
      expectInvalidTarget(await exchange(c, [stack.apiUrl]));
      expectInvalidTarget(await exchange(c, [stack.apiUrl, stack.mcpUrl]));
      expectInvalidTarget(await exchange(c, ['https://evil.example.com']));
      expectInvalidTarget(await exchange(c, ['not a uri']));
      const res = await exchange(c, [`${stack.mcpUrl}/mcp`]);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(await usableAt(res.body.access_token), { rest: false, mcp: true });
    });

    it('a code granted without a resource can be narrowed to one at the token endpoint (JSON bodies take an array)', async () => {
      const t = await tokensFor([], [stack.mcpUrl]);
      assert.deepEqual(await usableAt(t.access_token), { rest: false, mcp: true });
      const c = await codeFor([]);
      const res = await fetch(`${stack.apiUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'authorization_code',
          client_id: clientId,
          code: c.code,
          redirect_uri: REDIRECT,
          code_verifier: c.verifier,
          resource: [stack.apiUrl],
        }),
      });
      const body = (await res.json()) as any;
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.deepEqual(await usableAt(body.access_token), { rest: true, mcp: false });
    });
  });

  describe('refresh', () => {
    it('a grant bound to MCP refreshes for MCP only; another resource is invalid_target and burns nothing', async () => {
      const t = await tokensFor([stack.mcpUrl]);
      expectInvalidTarget(await refresh(t.refresh_token, [stack.apiUrl]));
      const plain = await refresh(t.refresh_token);
      assert.equal(plain.status, 200, JSON.stringify(plain.body));
      assert.deepEqual(await usableAt(plain.body.access_token), { rest: false, mcp: true }, "keeps the grant's resource");
      const named = await refresh(plain.body.refresh_token, [stack.mcpUrl]);
      assert.equal(named.status, 200, JSON.stringify(named.body));
      assert.deepEqual(await usableAt(named.body.access_token), { rest: false, mcp: true });
    });

    it('a grant without a resource refreshes for either one, or for both', async () => {
      const t = await tokensFor([]);
      const rest = await refresh(t.refresh_token, [stack.apiUrl]);
      assert.equal(rest.status, 200, JSON.stringify(rest.body));
      assert.deepEqual(await usableAt(rest.body.access_token), { rest: true, mcp: false });
      assert.equal((await introspect(rest.body.access_token)).aud, stack.apiUrl);
      // The refresh token still carries the whole grant.
      const both = await refresh(rest.body.refresh_token);
      assert.equal(both.status, 200, JSON.stringify(both.body));
      assert.deepEqual(await usableAt(both.body.access_token), { rest: true, mcp: true });
      expectInvalidTarget(await refresh(both.body.refresh_token, ['https://evil.example.com']));
    });
  });

  describe('the MCP SDK client', () => {
    for (const [label, serverUrlAsResource, expected] of [
      ["sends the metadata's resource", false, () => stack.mcpUrl],
      ['names the server URL as the resource', true, () => `${stack.mcpUrl}/mcp`],
    ] as const) {
      it(`auth() ${label}: the token is bound to {mcp_url}, works through the SDK, and its refresh stays there`, async () => {
        const host = new SdkHost({ serverUrlAsResource });
        const serverUrl = new URL('/mcp', stack.mcpUrl);
        const first = new StreamableHTTPClientTransport(serverUrl, { authProvider: host });
        await assert.rejects(new Client({ name: 'host', version: '1' }).connect(first), UnauthorizedError);
        const url = host.authorizationUrls[0]!;
        assert.equal(url.searchParams.get('resource'), expected());
        await first.finishAuth((await consent(url, { email: user.email, access: 'read' })).searchParams.get('code')!);
        const issued = host.tokens()!;
        assert.deepEqual(await usableAt(issued.access_token), { rest: false, mcp: true });

        const client = new Client({ name: 'host', version: '1' });
        await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: host }));
        assert.equal((await ok(client, 'get_workspace')).data.workspace.id, workspaceId);
        await client.close();

        // With a refresh token stored, auth() refreshes, sending the same indicator.
        assert.equal(await auth(host, { serverUrl }), 'AUTHORIZED');
        const refreshed = host.tokens()!;
        assert.notEqual(refreshed.access_token, issued.access_token);
        assert.deepEqual(await usableAt(refreshed.access_token), { rest: false, mcp: true });
        assert.equal((await introspect(refreshed.access_token)).aud, stack.mcpUrl);
      });
    }
  });
});
