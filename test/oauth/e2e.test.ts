import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { BrowserContext, Page } from 'playwright-core';
import { sha256Hex } from '../../lib/crypto';
import { db } from '../../lib/db';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { member, workspaceWithKey } from '../support/factories';
import { PASSWORD } from '../support/factories';
import { startOAuthApi } from './support';

// The whole flow as a third-party native app runs it: a standards-following OAuth client
// (oauth4webapi) for discovery, registration, code exchange, refresh, introspection and
// revocation; a loopback redirect listener on an ephemeral port (RFC 8252 7.3); and a real
// browser (headless Chromium) for sign-in and consent.

const insecure = { [oauth.allowInsecureRequests]: true } as const; // the test server is plain http on loopback

interface Callback {
  server: Server;
  port: number;
  next(): Promise<URL>;
}

/** The native app's loopback listener: records each redirect it receives. */
async function startCallbackListener(): Promise<Callback> {
  const waiting: Array<(u: URL) => void> = [];
  const received: URL[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url!, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    if (url.pathname === '/frame') {
      // A hostile page trying to embed the consent screen (spec 5.3.2: not embeddable).
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<!doctype html><iframe id="f" src="${url.searchParams.get('src')}" width="600" height="600"></iframe>`);
      return;
    }
    if (url.pathname !== '/callback') {
      res.writeHead(404).end(); // e.g. the browser's favicon request
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><p>Signed in. You can close this window.</p>');
    const w = waiting.shift();
    if (w) w(url);
    else received.push(url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    next: () =>
      new Promise<URL>((resolve) => {
        const r = received.shift();
        if (r) resolve(r);
        else waiting.push(resolve);
      }),
  };
}

describe('OAuth end to end: oauth4webapi client + headless Chromium', function () {
  this.timeout(120_000);
  let api: Awaited<ReturnType<typeof startOAuthApi>>;
  let callback: Callback;
  let context: BrowserContext;
  let browser: TestBrowser;

  before(async () => {
    api = await startOAuthApi();
    callback = await startCallbackListener();
    // A system Chromium when installed, else the one shipped by npm (test/support/browser.ts).
    browser = await launchBrowser();
    context = browser.context;
  });
  after(async () => {
    await browser?.close();
    callback?.server.close();
    api?.restore();
    await api?.close();
  });

  it('discovery → registration → authorize in a browser → code → API → refresh → reuse detection → introspection → revocation', async () => {
    const ws = await workspaceWithKey({ projects: 2, name: 'E2E Workspace' });
    const user = await member(ws.workspace.id, 'Admin');
    const pinned = ws.projects[1]!;
    const issuer = new URL(api.url);

    // Discovery (RFC 8414) and the resource's metadata (RFC 9728).
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    const rs = await oauth.processResourceDiscoveryResponse(issuer, await oauth.resourceDiscoveryRequest(issuer, insecure));
    assert.deepEqual(rs.authorization_servers, [as.issuer]);

    // Dynamic registration (RFC 7591): a public native client with a loopback redirect.
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'E2E Desktop Agent',
          redirect_uris: ['http://127.0.0.1/callback'],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          scope: 'read write offline_access',
        },
        insecure,
      ),
    );
    const client: oauth.Client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
    const redirectUri = `http://127.0.0.1:${callback.port}/callback`;

    async function authorize(page: Page, opts: { expectLogin: boolean; expectWelcomeBack: boolean }) {
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: redirectUri,
        scope: 'read write offline_access',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString();
      const first = await page.goto(url.href);
      assert.equal(first!.status(), 200);
      if (opts.expectLogin) {
        assert.equal(await page.title(), 'Sign in');
        assert.equal(first!.headers()['x-frame-options'], 'DENY');
        await page.fill('input[name=email]', user.email);
        await page.fill('input[name=password]', PASSWORD);
        await Promise.all([page.waitForURL(/\/oauth\/interaction\//), page.click('button[type=submit]')]);
      }
      const callbackUrl = callback.next();
      if (opts.expectWelcomeBack) {
        await page.getByRole('heading', { name: /Welcome back/ }).waitFor();
        await page.click('button[value=approve]');
      } else {
        assert.equal(await page.title(), 'Authorize access');
        const body = await page.textContent('main');
        assert.match(body!, /E2E Desktop Agent/);
        assert.match(body!, /Unverified/);
        assert.match(body!, /127\.0\.0\.1/);
        await page.selectOption('select[name=project]', pinned.id);
        await page.check('input[name=access][value=full]');
        await page.click('button[value=approve]');
      }
      const received = await callbackUrl;
      // RFC 9207 and state checks are oauth4webapi's.
      const params = oauth.validateAuthResponse(as, client, received, state);
      return { params, verifier };
    }

    const page = await context.newPage();
    const first = await authorize(page, { expectLogin: true, expectWelcomeBack: false });

    // Code exchange with PKCE.
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), first.params, redirectUri, first.verifier, insecure),
    );
    assert.match(tokens.access_token, /^svc_oat_/);
    assert.equal(tokens.token_type, 'bearer');
    assert.ok(tokens.refresh_token);
    assert.ok(tokens.scope!.split(' ').includes('posts:write'));

    // The API sees the oauth_token principal.
    const meRes = await oauth.protectedResourceRequest(
      tokens.access_token,
      'GET',
      new URL(`${api.url}/v1/workspaces/me`),
      undefined,
      undefined,
      insecure,
    );
    assert.equal(meRes.status, 200);
    const me = (await meRes.json()) as any;
    assert.equal(me.data.workspace.id, ws.workspace.id);
    assert.equal(me.data.principal.type, 'oauth_token');
    assert.equal(me.data.principal.clientId, client.client_id);
    assert.equal(me.data.principal.actingUserId, user.id);
    assert.equal(me.data.principal.defaultProject.id, pinned.id);

    // Introspection of the live token.
    const live = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, oauth.None(), tokens.access_token, insecure),
    );
    assert.equal(live.active, true);
    assert.equal(live.client_id, client.client_id);
    assert.equal(live.sub, user.id);

    // Refresh rotates; a replay within the grace window returns the same pair.
    const refresh = (rt: string) => oauth.refreshTokenGrantRequest(as, client, oauth.None(), rt, insecure);
    const rotated = await oauth.processRefreshTokenResponse(as, client, await refresh(tokens.refresh_token!));
    assert.notEqual(rotated.refresh_token, tokens.refresh_token);
    const replayed = await oauth.processRefreshTokenResponse(as, client, await refresh(tokens.refresh_token!));
    assert.equal(replayed.access_token, rotated.access_token);
    assert.equal(replayed.refresh_token, rotated.refresh_token);

    // Past the window, presenting the old token again is reuse: the family dies.
    await db()('oauth_refresh_tokens')
      .where({ token_hash: sha256Hex(tokens.refresh_token!) })
      .update({ rotated_at: new Date(Date.now() - 60_000) });
    const reuse = await refresh(tokens.refresh_token!);
    const reuseBody = (await reuse.clone().json()) as any;
    assert.equal(reuse.status, 400);
    assert.equal(reuseBody.error.code, 'invalid_grant');
    await assert.rejects(oauth.processRefreshTokenResponse(as, client, reuse));
    const dead = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, oauth.None(), rotated.access_token, insecure),
    );
    assert.deepEqual(dead, { active: false });
    // A 401 with an RFC 6750 challenge, which oauth4webapi surfaces as an error.
    await assert.rejects(
      oauth.protectedResourceRequest(rotated.access_token, 'GET', new URL(`${api.url}/v1/workspaces/me`), undefined, undefined, insecure),
      (err: unknown) =>
        err instanceof oauth.WWWAuthenticateChallengeError &&
        err.cause[0]!.parameters.error === 'invalid_token' &&
        err.response.status === 401,
    );

    // Re-consent is forced (no welcome back), still signed in; the next round gets welcome back.
    const second = await authorize(page, { expectLogin: false, expectWelcomeBack: false });
    const again = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), second.params, redirectUri, second.verifier, insecure),
    );
    const third = await authorize(page, { expectLogin: false, expectWelcomeBack: true });
    const thirdTokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), third.params, redirectUri, third.verifier, insecure),
    );
    assert.match(thirdTokens.access_token, /^svc_oat_/);

    // Revocation (RFC 7009) of the refresh token kills its family.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), again.refresh_token!, insecure));
    const revoked = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, oauth.None(), again.access_token, insecure),
    );
    assert.equal(revoked.active, false);
    const stillAlive = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, oauth.None(), thirdTokens.access_token, insecure),
    );
    assert.equal(stillAlive.active, true, 'another authorization of the same client is untouched');
  });

  it('the consent screen cannot be framed by another site', async () => {
    const page = await context.newPage();
    const consentUrl = `${api.url}/oauth/authorize?client_id=cli_x`; // any page of the authorization endpoint
    let blocked = false;
    page.on('console', (msg) => {
      if (/frame-ancestors|X-Frame-Options|refused to (display|frame)/i.test(msg.text())) blocked = true;
    });
    const frameResponse = page.waitForResponse((r) => r.url().startsWith(`${api.url}/oauth/authorize`));
    await page.goto(`http://127.0.0.1:${callback.port}/frame?src=${encodeURIComponent(consentUrl)}`);
    const res = await frameResponse;
    assert.equal(res.headers()['x-frame-options'], 'DENY');
    assert.match(res.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
    await page.waitForTimeout(300);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    const framedText = frame ? await frame.innerText('body', { timeout: 1000 }).catch(() => '') : '';
    assert.ok(blocked, 'the browser reports the refused framing');
    assert.doesNotMatch(framedText, /Unknown application/, 'the framed page does not render');
  });
});
