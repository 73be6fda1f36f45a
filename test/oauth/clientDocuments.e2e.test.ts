import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { BrowserContext } from 'playwright-core';
import { documentClientId } from '../../api/oauth/clientDocuments';
import { db } from '../../lib/db';
import { randomBase62 } from '../../lib/ids';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { member, PASSWORD, workspaceWithKey } from '../support/factories';
import { startApiProcess, type ApiProcess } from '../support/foundation';
import { resetOAuthRateLimits } from './support';
import { SdkHost } from '../support/mcp';

// Client ID Metadata Documents end to end (docs/oauth.md "Client ID Metadata Documents"): the
// MCP SDK client's own CIMD support (its provider names a `clientMetadataUrl`, and the SDK
// uses it as client_id when the authorization server metadata advertises
// client_id_metadata_document_supported) against an API process, with sign-in and consent in
// headless Chromium, then the code exchange and tools/list with the token.
//
// The SDK accepts only an https `clientMetadataUrl`, so the document is served over TLS on
// loopback with the self-signed certificate of test/fixtures/tls, which the API process trusts
// through Node's NODE_EXTRA_CA_CERTS; loopback document URLs need OAUTH_CIMD_ALLOW_DEV_URLS.

const TLS = path.resolve(import.meta.dirname, '..', 'fixtures', 'tls');

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describe('Client ID Metadata Documents end to end: the MCP SDK client + headless Chromium', function () {
  this.timeout(120_000);
  let api: ApiProcess;
  let browser: TestBrowser;
  let context: BrowserContext;
  let documents: Server;
  let callbackServer: Server;
  let documentUrl: string;
  let redirectUrl: string;
  let document: Record<string, unknown>;
  let documentFetches = 0;
  const codes: URL[] = [];

  before(async () => {
    await resetOAuthRateLimits();
    documents = createHttpsServer(
      { key: readFileSync(path.join(TLS, 'loopback.key')), cert: readFileSync(path.join(TLS, 'loopback.crt')) },
      (req, res) => {
        if (req.url !== new URL(documentUrl).pathname) return void res.writeHead(404).end();
        documentFetches++;
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=300' });
        res.end(JSON.stringify(document));
      },
    );
    // A fresh path per run: the cache key is the URL, and the port may repeat across runs.
    documentUrl = `https://127.0.0.1:${await listen(documents)}/oauth/${randomBase62(10)}/client.json`;
    callbackServer = createHttpServer((req, res) => {
      const url = new URL(req.url!, redirectUrl);
      if (url.pathname !== '/callback') return void res.writeHead(404).end();
      codes.push(url);
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><p>Signed in.</p>');
    });
    redirectUrl = `http://127.0.0.1:${await listen(callbackServer)}/callback`;
    document = {
      client_id: documentUrl,
      client_name: 'CIMD Test Host',
      client_uri: 'https://127.0.0.1/host',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    api = await startApiProcess({ NODE_EXTRA_CA_CERTS: path.join(TLS, 'loopback.crt'), OAUTH_CIMD_ALLOW_DEV_URLS: 'true' });
    browser = await launchBrowser();
    context = browser.context;
  });
  after(async () => {
    await browser?.close();
    await api?.close();
    documents?.close();
    callbackServer?.close();
  });

  it('authorize with the document URL as client_id → consent naming its host → token → tools/list, no registration', async () => {
    const ws = await workspaceWithKey({ name: 'CIMD Workspace' });
    const user = await member(ws.workspace.id, 'Admin');
    const host = new SdkHost({ clientMetadataUrl: documentUrl, redirectUrl, clientName: 'CIMD Test Host' });
    const rowsBefore = await db()('oauth_clients').count<{ count: string }[]>('* as count');

    // auth() finds the authorization server from the 401, sees client_id_metadata_document_supported
    // and uses the document URL as its client_id instead of registering.
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', api.mcpUrl), { authProvider: host });
    await assert.rejects(new Client({ name: 'cimd-host', version: '1' }).connect(transport), UnauthorizedError);
    assert.equal(host.clientInformation()?.client_id, documentUrl);
    const authorizationUrl = host.authorizationUrls[0]!;
    assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${api.url}/oauth/authorize`);
    assert.equal(authorizationUrl.searchParams.get('client_id'), documentUrl);
    assert.equal(authorizationUrl.searchParams.get('redirect_uri'), redirectUrl);
    const rowsAfterAuthorize = await db()('oauth_clients').count<{ count: string }[]>('* as count');
    assert.equal(rowsAfterAuthorize[0]!.count, rowsBefore[0]!.count, 'no registration');

    // The user signs in and approves in a real browser.
    const page = await context.newPage();
    const first = await page.goto(authorizationUrl.href);
    assert.equal(first!.status(), 200);
    assert.equal(await page.title(), 'Sign in');
    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', PASSWORD);
    await Promise.all([page.waitForURL(/\/oauth\/interaction\//), page.click('button[type=submit]')]);
    assert.equal(await page.title(), 'Authorize access');
    // The name is the document's; the host beside it is the client_id's, which the name cannot fake.
    const heading = await page.textContent('h1');
    assert.match(heading!, /CIMD Test Host/);
    assert.match(heading!, new RegExp(`from ${new URL(documentUrl).host.replace(/\./g, '\\.')}`));
    assert.match((await page.textContent('main'))!, /Unverified/);
    await page.check('input[name=access][value=full]');
    await Promise.all([page.waitForURL(/\/callback\?/), page.click('button[value=approve]')]);
    await page.close();
    const back = codes.shift()!;
    assert.equal(back.searchParams.get('iss'), api.url);

    // The code exchange names the document URL as client_id again (the SDK's finishAuth).
    await transport.finishAuth(back.searchParams.get('code')!);
    assert.match(host.tokens()!.access_token, /^svc_oat_/);
    assert.ok(host.tokens()!.refresh_token, 'the document lists the refresh_token grant');

    const client = new Client({ name: 'cimd-host', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', api.mcpUrl), { authProvider: host }));
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'get_workspace'));
    await client.close();

    // The row that keys the grant appeared at approval, a snapshot of the document.
    const row = await db()('oauth_clients').where({ metadata_url: documentUrl }).first();
    assert.equal(row.id, documentClientId(documentUrl));
    assert.equal(row.client_name, 'CIMD Test Host');
    assert.deepEqual(row.redirect_uris, [redirectUrl]);
    const grant = await db()('oauth_grants').where({ client_id: row.id, user_id: user.id }).whereNull('revoked_at').first();
    assert.equal(grant.workspace_id, ws.workspace.id);

    // max-age=300 covered authorize, the consent pages and the token request: one fetch.
    assert.equal(documentFetches, 1);

    // Introspection names the client as it knows itself.
    const introspected = await fetch(`${api.url}/oauth/introspect`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: host.tokens()!.access_token }),
    }).then((r) => r.json() as Promise<{ active: boolean; client_id: string }>);
    assert.equal(introspected.active, true);
    assert.equal(introspected.client_id, documentUrl);
  });
});
