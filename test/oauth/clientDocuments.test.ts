import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cachedDocumentTtl, documentClientId } from '../../api/oauth/clientDocuments';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { randomBase62 } from '../../lib/ids';
import { member, workspaceWithKey } from '../support/factories';
import {
  authorizeCode,
  authorizePath,
  exchangeCode,
  form,
  getJson,
  pkce,
  refresh,
  register,
  resetOAuthRateLimits,
  useOAuthApi,
} from './support';

// Client ID Metadata Documents (docs/oauth.md "Client ID Metadata Documents";
// draft-ietf-oauth-client-id-metadata-document) against hostile and changing documents. The
// documents are served by a plain-http server on loopback, which OAUTH_CIMD_ALLOW_DEV_URLS
// (config.oauthClientDocuments.allowDevUrls) lets through; the cases about that guard turn it off.
//
// A refusal at /oauth/authorize is an HTML page (status 400, no redirect: the client is not
// trusted yet, RFC 6749 4.1.2.1) naming the OAuth error; at /oauth/token it is the envelope with
// the same name. "Nothing stored": no session cookie (so no interaction), no client row, no
// cached document.

const REDIRECT = 'http://127.0.0.1:9/callback';
const settings = config.oauthClientDocuments;
const defaults = { ...settings };

interface Served {
  url: string;
  hits: number;
  respond(res: ServerResponse, url: string): void;
}

function json(body: unknown, headers: Record<string, string> = {}) {
  return (res: ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

function documentFor(url: string, overrides: Record<string, unknown> = {}) {
  return {
    client_id: url,
    client_name: 'Document Client',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...overrides,
  };
}

describe('OAuth Client ID Metadata Documents', function () {
  this.timeout(60_000);
  const api = useOAuthApi();
  const served = new Map<string, Served>();
  let server: Server;
  let port: number;

  /** A document path on the loopback server; `respond` may be replaced later (a document that changes). */
  function serve(respond: (url: string) => Served['respond'], host = '127.0.0.1'): Served {
    const path = `/clients/${randomBase62(10)}/client.json`;
    const url = `http://${host}:${port}${path}`;
    const s: Served = { url, hits: 0, respond: respond(url) };
    served.set(path, s);
    return s;
  }

  before(async () => {
    server = createServer((req, res) => {
      const s = served.get(req.url!);
      if (!s) return void res.writeHead(404).end();
      s.hits++;
      s.respond(res, s.url);
    });
    port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  });
  beforeEach(() => {
    // Loopback and http for the test server; no cache floor, so that what a document says
    // about caching is what happens.
    Object.assign(settings, defaults, { allowDevUrls: true, cacheMinS: 0 });
  });
  after(() => {
    Object.assign(settings, defaults);
    server.close();
  });

  async function authorize(clientId: string, redirectUri = REDIRECT) {
    const { challenge } = pkce();
    const res = await fetch(api.url + authorizePath({ clientId, redirectUri, challenge, method: 'S256', scope: 'read offline_access' }), {
      redirect: 'manual',
    });
    return { status: res.status, html: await res.text(), location: res.headers.get('location'), cookie: res.headers.get('set-cookie') };
  }

  /** A new workspace's admin approves read access for the document client: its code and verifier. */
  async function approvedCode(clientId: string) {
    const ws = await workspaceWithKey();
    const user = await member(ws.workspace.id, 'Admin');
    const { verifier, challenge } = pkce();
    const approved = await authorizeCode(api.url, {
      clientId,
      redirectUri: REDIRECT,
      challenge,
      scope: 'read offline_access',
      email: user.email,
      access: 'read',
    });
    return { ...approved, verifier };
  }

  async function assertNothingStored(clientId: string) {
    assert.equal(await db()('oauth_clients').where({ metadata_url: clientId }).first(), undefined, 'no client row');
    assert.equal(
      await db()('oauth_clients')
        .where({ id: documentClientId(clientId) })
        .first(),
      undefined,
      'no client row',
    );
    assert.equal(await cachedDocumentTtl(clientId), null, 'no cached document');
  }

  /** Refused at /oauth/authorize (page) and /oauth/token (envelope) as invalid_client; nothing stored. */
  async function assertInvalidClient(clientId: string, why: RegExp) {
    const page = await authorize(clientId);
    assert.equal(page.status, 400);
    assert.equal(page.location, null, 'never a redirect');
    assert.equal(page.cookie, null, 'no session, so no interaction');
    assert.match(page.html, /<code>invalid_client<\/code>/);
    assert.match(page.html, why);
    const token = await form(api.url, '/oauth/token', {
      grant_type: 'authorization_code',
      client_id: clientId,
      code: 'not-a-code',
      redirect_uri: REDIRECT,
      code_verifier: 'v'.repeat(43),
    });
    assert.equal(token.status, 401);
    assert.equal(token.body.error.code, 'invalid_client');
    assert.match(token.body.error.message, why);
    await assertNothingStored(clientId);
  }

  it('the metadata advertises client_id_metadata_document_supported, and dynamic registration goes on beside it', async () => {
    const metadata = await getJson(`${api.url}/.well-known/oauth-authorization-server`);
    assert.equal(metadata.body.client_id_metadata_document_supported, true);
    assert.equal(metadata.body.registration_endpoint, `${api.url}/oauth/register`);
    const reg = await register(api.url, { client_name: 'Registered', redirect_uris: [REDIRECT] });
    assert.equal(reg.status, 201);
    assert.match(reg.body.client_id, /^cli_/);
  });

  it('a document whose client_id is not its URL: invalid_client', async () => {
    const doc = serve((url) => json(documentFor(url.replace('client.json', 'other.json'))));
    await assertInvalidClient(doc.url, /names another client_id/);
  });

  it('a redirect URI the document does not list: an invalid_request page, no redirect, nothing stored', async () => {
    const doc = serve((url) => json(documentFor(url)));
    const page = await authorize(doc.url, 'http://127.0.0.1:9/elsewhere');
    assert.equal(page.status, 400);
    assert.equal(page.location, null);
    assert.equal(page.cookie, null);
    assert.match(page.html, /<code>invalid_request<\/code>/);
    assert.match(page.html, /metadata document does not list/);
    assert.equal(await db()('oauth_clients').where({ metadata_url: doc.url }).first(), undefined);
  });

  it('a document over the size cap (5 KB): invalid_client', async () => {
    const doc = serve((url) => json(documentFor(url, { client_name: 'x'.repeat(6_000) })));
    await assertInvalidClient(doc.url, /5120-byte limit/);
  });

  it('a document that does not arrive within the time limit: invalid_client, without waiting for it', async () => {
    settings.timeoutMs = 400;
    const doc = serve((url) => (res) => {
      setTimeout(() => {
        if (!res.destroyed) json(documentFor(url))(res);
      }, 3_000);
    });
    const started = Date.now();
    await assertInvalidClient(doc.url, /400 ms/);
    // Two refusals (authorize, token), each cut at the limit rather than after the 3 s answer.
    assert.ok(Date.now() - started < 2_500, `took ${Date.now() - started} ms`);
  });

  it('loopback with the switch off, and private or metadata addresses even with it on: invalid_client, never fetched', async () => {
    const doc = serve((url) => json(documentFor(url)));
    settings.allowDevUrls = false;
    await assertInvalidClient(doc.url, /must use https/);
    const overTls = doc.url.replace('http:', 'https:');
    await assertInvalidClient(overTls, /loopback address/);
    // A name is refused by the class of its address, which the unauthenticated page does not disclose.
    const named = overTls.replace('127.0.0.1', 'localhost');
    await assertInvalidClient(named, /loopback address/);
    assert.doesNotMatch((await authorize(named)).html, /127\.0\.0\.1|::1/);
    assert.equal(doc.hits, 0);

    settings.allowDevUrls = true;
    await assertInvalidClient('http://10.20.30.40/clients/x/client.json', /private address/);
    await assertInvalidClient('http://169.254.169.254/latest/client.json', /(metadata|link_local) address/);
  });

  it('a redirect, to another host or to the same one: invalid_client, the target never fetched', async () => {
    const target = serve((url) => json(documentFor(url)), 'localhost');
    const elsewhere = serve(() => (res) => res.writeHead(302, { Location: target.url }).end());
    await assertInvalidClient(elsewhere.url, /redirects are not followed/);
    const sameHost = serve(() => (res) => res.writeHead(301, { Location: '/clients/moved/client.json' }).end());
    await assertInvalidClient(sameHost.url, /redirects are not followed/);
    assert.equal(target.hits, 0);
  });

  it('invalid JSON, a non-object, an error status: invalid_client', async () => {
    const broken = serve((url) => json(`{"client_id": "${url}", "redirect_uris": [`));
    await assertInvalidClient(broken.url, /not valid JSON/);
    const list = serve((url) => json([documentFor(url)]));
    await assertInvalidClient(list.url, /not a JSON object/);
    const missing = serve(() => (res) => res.writeHead(404).end());
    await assertInvalidClient(missing.url, /HTTP 404/);
  });

  it('a secret, a secret-based auth method or a redirect URI registration would refuse: invalid_client', async () => {
    const secret = serve((url) => json(documentFor(url, { client_secret: 's3cr3t' })));
    await assertInvalidClient(secret.url, /client_secret/);
    const basic = serve((url) => json(documentFor(url, { token_endpoint_auth_method: 'client_secret_basic' })));
    await assertInvalidClient(basic.url, /token_endpoint_auth_method/);
    const script = serve((url) => json(documentFor(url, { redirect_uris: ['javascript:alert(1)'] })));
    await assertInvalidClient(script.url, /redirect_uris\[0\]/);
  });

  it('a client_id URL with a fragment, user information, dot segments or no path: invalid_client, never fetched', async () => {
    const doc = serve((url) => json(documentFor(url)));
    const origin = new URL(doc.url).origin;
    await assertInvalidClient(`${doc.url}#frag`, /fragment/);
    await assertInvalidClient(doc.url.replace('http://', 'http://user:pw@'), /user information/);
    await assertInvalidClient(`${origin}/clients/../clients/x/client.json`, /path segments/);
    await assertInvalidClient(`${origin}/`, /must have a path/);
    assert.equal(doc.hits, 0);
  });

  it('document fetches are charged to the requesting address; cached documents are not', async () => {
    const limits = config.rateLimit as { unauthenticatedPerWindow: number };
    const previous = limits.unauthenticatedPerWindow;
    await resetOAuthRateLimits();
    limits.unauthenticatedPerWindow = 3;
    try {
      const docs = [0, 1, 2, 3].map(() => serve((url) => json(documentFor(url), { 'Cache-Control': 'max-age=60' })));
      for (const doc of docs.slice(0, 3)) assert.equal((await authorize(doc.url)).status, 303);
      const page = await authorize(docs[3]!.url);
      assert.equal(page.status, 400);
      assert.match(page.html, /Too many client metadata documents/);
      const token = await form(api.url, '/oauth/token', { grant_type: 'refresh_token', client_id: docs[3]!.url, refresh_token: 'x' });
      assert.equal(token.status, 429);
      assert.equal(token.body.error.code, 'rate_limited');
      assert.equal(docs[3]!.hits, 0);
      assert.equal((await authorize(docs[0]!.url)).status, 303, 'a cached document costs nothing');
    } finally {
      limits.unauthenticatedPerWindow = previous;
      await resetOAuthRateLimits();
    }
  });

  describe('a document that changes between authorize and token', () => {
    it('within its cache lifetime the token request is checked against the cached document', async () => {
      const doc = serve((url) => json(documentFor(url), { 'Cache-Control': 'public, max-age=120' }));
      const { redirect, consentPage, verifier } = await approvedCode(doc.url);
      // The consent page names the host of the client_id beside the name the document gives.
      assert.match(
        consentPage.html,
        new RegExp(`Document Client <span class="muted client-host">from <strong>127\\.0\\.0\\.1:${port}</strong>`),
      );
      const ttl = await cachedDocumentTtl(doc.url);
      assert.ok(ttl !== null && ttl > 100 && ttl <= 120, `cached for ${ttl} s`);

      doc.respond = json(documentFor(doc.url, { redirect_uris: ['http://127.0.0.1:9/moved'] }), { 'Cache-Control': 'max-age=120' });
      const token = await exchangeCode(api.url, {
        clientId: doc.url,
        code: redirect.searchParams.get('code')!,
        redirectUri: REDIRECT,
        verifier,
      });
      assert.equal(token.status, 200);
      assert.equal(doc.hits, 1, 'authorize, the consent pages and the token request shared one fetch');

      // A document client is reachable by its URL only: its internal id is not a client_id.
      const byId = await refresh(api.url, { clientId: documentClientId(doc.url), refreshToken: token.body.refresh_token });
      assert.equal(byId.status, 401);
      assert.equal(byId.body.error.code, 'invalid_client');

      // Revocation names the client by its URL too (RFC 7009), and ends the family.
      const revoked = await form(api.url, '/oauth/revoke', { client_id: doc.url, token: token.body.refresh_token });
      assert.equal(revoked.status, 200);
      const afterRevoke = await refresh(api.url, { clientId: doc.url, refreshToken: token.body.refresh_token });
      assert.equal(afterRevoke.status, 400);
      assert.equal(afterRevoke.body.error.code, 'invalid_grant');
    });

    it('once the cache has lapsed the new document decides: a dropped redirect URI refuses the code (which survives), a broken document refuses the client', async () => {
      const original = (url: string) => json(documentFor(url), { 'Cache-Control': 'no-store' });
      const doc = serve(original);
      const { redirect, verifier } = await approvedCode(doc.url);
      const code = redirect.searchParams.get('code')!;
      assert.equal(await cachedDocumentTtl(doc.url), null, 'no-store with no floor: never cached');
      const rowBefore = await db()('oauth_clients').where({ metadata_url: doc.url }).first();
      assert.equal(rowBefore.id, documentClientId(doc.url), 'stored at approval');

      doc.respond = json(documentFor(doc.url, { redirect_uris: ['http://127.0.0.1:9/moved'] }), { 'Cache-Control': 'no-store' });
      const refused = await exchangeCode(api.url, { clientId: doc.url, code, redirectUri: REDIRECT, verifier });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error.code, 'invalid_grant');
      assert.match(refused.body.error.message, /no longer one of the client's/);

      doc.respond = original(doc.url);
      const token = await exchangeCode(api.url, { clientId: doc.url, code, redirectUri: REDIRECT, verifier });
      assert.equal(token.status, 200, 'the refused request did not consume the code');

      // Refreshing re-validates too: a document that lost the refresh grant, then one that is broken.
      doc.respond = json(documentFor(doc.url, { grant_types: ['authorization_code'] }), { 'Cache-Control': 'no-store' });
      const noRefresh = await refresh(api.url, { clientId: doc.url, refreshToken: token.body.refresh_token });
      assert.equal(noRefresh.status, 400);
      assert.equal(noRefresh.body.error.code, 'unauthorized_client');
      doc.respond = json(documentFor(doc.url.replace('client.json', 'impostor.json')), { 'Cache-Control': 'no-store' });
      const mismatch = await refresh(api.url, { clientId: doc.url, refreshToken: token.body.refresh_token });
      assert.equal(mismatch.status, 401);
      assert.equal(mismatch.body.error.code, 'invalid_client');

      doc.respond = original(doc.url);
      const refreshed = await refresh(api.url, { clientId: doc.url, refreshToken: token.body.refresh_token });
      assert.equal(refreshed.status, 200, 'neither refusal rotated the refresh token');
    });

    it('the floor holds a document that asks not to be cached for the configured minimum', async () => {
      settings.cacheMinS = 30;
      const doc = serve((url) => json(documentFor(url), { 'Cache-Control': 'no-store' }));
      assert.equal((await authorize(doc.url)).status, 303);
      const ttl = await cachedDocumentTtl(doc.url);
      assert.ok(ttl !== null && ttl > 25 && ttl <= 30, `cached for ${ttl} s`);
      settings.cacheMaxS = 60;
      const long = serve((url) => json(documentFor(url), { 'Cache-Control': 'max-age=31536000' }));
      assert.equal((await authorize(long.url)).status, 303);
      const capped = await cachedDocumentTtl(long.url);
      assert.ok(capped !== null && capped > 55 && capped <= 60, `capped at ${capped} s`);
    });
  });
});
