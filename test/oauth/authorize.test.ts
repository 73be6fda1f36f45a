import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { READ_SCOPES } from '../../lib/scopes';
import { member, workspaceWithKey } from '../support/factories';
import {
  authorizeCode,
  authorizePath,
  Browser,
  csrfOf,
  exchangeCode,
  formAction,
  pkce,
  register,
  signIn,
  useOAuthApi,
  tokenFor,
} from './support';

// GET /oauth/authorize and the pages behind it (spec 5.3.2, 5.3.3; RFC 6749 4.1, RFC 7636, RFC 8252, RFC 9207).

describe('OAuth authorization endpoint and consent pages', () => {
  const api = useOAuthApi();

  async function setup(opts: { projects?: number; scope?: string; redirectUris?: string[]; clientName?: string } = {}) {
    const ws = await workspaceWithKey({ projects: opts.projects ?? 1 });
    const user = await member(ws.workspace.id, 'Admin');
    const redirectUris = opts.redirectUris ?? ['https://client.example.com/cb'];
    const reg = await register(api.url, {
      client_name: opts.clientName ?? 'Test Client',
      redirect_uris: redirectUris,
      ...(opts.scope ? { scope: opts.scope } : {}),
    });
    assert.equal(reg.status, 201);
    return { ...ws, user, clientId: reg.body.client_id as string, redirectUri: redirectUris[0]! };
  }

  function expectErrorPage(res: { status: number; location: string | null; html: string; headers: Headers }) {
    assert.equal(res.status, 400);
    assert.equal(res.location, null, 'an error page never redirects');
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  }

  function expectRedirectError(res: { status: number; location: string | null }, redirectUri: string, error: string, state = 'st-123') {
    assert.equal(res.status, 303);
    const loc = new URL(res.location!);
    assert.equal(`${loc.origin}${loc.pathname}`, redirectUri);
    assert.equal(loc.searchParams.get('error'), error);
    assert.ok(loc.searchParams.get('error_description'));
    assert.equal(loc.searchParams.get('state'), state);
    assert.equal(loc.searchParams.get('iss'), api.url, 'RFC 9207 iss on every redirect');
    assert.equal(loc.searchParams.get('code'), null);
  }

  describe('before the redirect URI is trusted: an HTML error page, never a redirect', () => {
    it('unknown client_id', async () => {
      const { challenge } = pkce();
      const res = await new Browser(api.url).request(
        'GET',
        authorizePath({ clientId: 'cli_doesnotexist', redirectUri: 'https://client.example.com/cb', challenge, method: 'S256' }),
      );
      expectErrorPage(res);
      assert.match(res.html, /not registered/);
    });

    it('missing client_id and missing redirect_uri', async () => {
      const { clientId } = await setup();
      const noClient = await new Browser(api.url).request(
        'GET',
        '/oauth/authorize?response_type=code&redirect_uri=https://client.example.com/cb',
      );
      expectErrorPage(noClient);
      const noRedirect = await new Browser(api.url).request('GET', `/oauth/authorize?response_type=code&client_id=${clientId}`);
      expectErrorPage(noRedirect);
    });

    for (const [label, presented] of [
      ['another host', 'https://evil.example.com/cb'],
      ['another path', 'https://client.example.com/other'],
      ['an extra query', 'https://client.example.com/cb?x=1'],
      ['http instead of https', 'http://client.example.com/cb'],
      ['a different port', 'https://client.example.com:8443/cb'],
    ]) {
      it(`redirect_uri mismatch (${label})`, async () => {
        const { clientId } = await setup();
        const { challenge } = pkce();
        const res = await new Browser(api.url).request(
          'GET',
          authorizePath({ clientId, redirectUri: presented!, challenge, method: 'S256' }),
        );
        expectErrorPage(res);
        assert.match(res.html, /not registered/);
      });
    }

    it('even when the rest of the request is also wrong (no PKCE, bad response_type)', async () => {
      const { clientId } = await setup();
      const res = await new Browser(api.url).request(
        'GET',
        `/oauth/authorize?response_type=token&client_id=${clientId}&redirect_uri=${encodeURIComponent('https://evil.example.com/cb')}`,
      );
      expectErrorPage(res);
    });

    it('the port of localhost may not vary (only loopback IP literals, RFC 8252 7.3)', async () => {
      const { clientId } = await setup({ redirectUris: ['http://localhost/cb'] });
      const { challenge } = pkce();
      const res = await new Browser(api.url).request(
        'GET',
        authorizePath({ clientId, redirectUri: 'http://localhost:5123/cb', challenge, method: 'S256' }),
      );
      expectErrorPage(res);
    });
  });

  describe('after: RFC 6749 errors on the redirect, with state and iss', () => {
    it('PKCE missing', async () => {
      const { clientId, redirectUri } = await setup();
      const res = await new Browser(api.url).request('GET', authorizePath({ clientId, redirectUri }));
      expectRedirectError(res, redirectUri, 'invalid_request');
    });

    it('PKCE method plain or absent', async () => {
      const { clientId, redirectUri } = await setup();
      const { verifier, challenge } = pkce();
      expectRedirectError(
        await new Browser(api.url).request('GET', authorizePath({ clientId, redirectUri, challenge: verifier, method: 'plain' })),
        redirectUri,
        'invalid_request',
      );
      expectRedirectError(
        await new Browser(api.url).request('GET', authorizePath({ clientId, redirectUri, challenge })),
        redirectUri,
        'invalid_request',
      );
      expectRedirectError(
        await new Browser(api.url).request('GET', authorizePath({ clientId, redirectUri, challenge: 'short', method: 'S256' })),
        redirectUri,
        'invalid_request',
      );
    });

    it('response_type other than code', async () => {
      const { clientId, redirectUri } = await setup();
      const { challenge } = pkce();
      const res = await new Browser(api.url).request(
        'GET',
        authorizePath({ clientId, redirectUri, challenge, method: 'S256', extra: { response_type: 'token' } }),
      );
      expectRedirectError(res, redirectUri, 'unsupported_response_type');
    });

    it('unknown scope, and scope beyond the registered one', async () => {
      const { clientId, redirectUri } = await setup({ scope: 'posts:read' });
      const { challenge } = pkce();
      expectRedirectError(
        await new Browser(api.url).request(
          'GET',
          authorizePath({ clientId, redirectUri, challenge, method: 'S256', scope: 'posts:read posts:fly' }),
        ),
        redirectUri,
        'invalid_scope',
      );
      expectRedirectError(
        await new Browser(api.url).request(
          'GET',
          authorizePath({ clientId, redirectUri, challenge, method: 'S256', scope: 'posts:write' }),
        ),
        redirectUri,
        'invalid_scope',
      );
    });

    it('a declined consent gives access_denied with the state', async () => {
      const { clientId, redirectUri, user } = await setup();
      const { challenge } = pkce();
      const browser = new Browser(api.url);
      const login = await browser.follow(
        'GET',
        authorizePath({ clientId, redirectUri, challenge, method: 'S256', state: 'xyz', scope: 'read' }),
      );
      const consent = await signIn(browser, login, user.email);
      const res = await browser.request('POST', formAction(consent.html, 'confirm'), { csrf: csrfOf(consent.html), decision: 'deny' });
      expectRedirectError(res, redirectUri, 'access_denied', 'xyz');
    });
  });

  it('loopback IP redirect: any port at request time, the exact URI at the token endpoint', async () => {
    const { clientId, user } = await setup({ redirectUris: ['http://127.0.0.1/callback'] });
    const { verifier, challenge } = pkce();
    const presented = 'http://127.0.0.1:49152/callback';
    const { redirect } = await authorizeCode(api.url, { clientId, redirectUri: presented, challenge, email: user.email, scope: 'read' });
    assert.equal(redirect.port, '49152');
    assert.equal(redirect.pathname, '/callback');
    const code = redirect.searchParams.get('code')!;
    const wrong = await exchangeCode(api.url, { clientId, code, redirectUri: 'http://127.0.0.1:49153/callback', verifier });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.code, 'invalid_grant');
    const ok = await exchangeCode(api.url, { clientId, code, redirectUri: presented, verifier });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it("a native app's private-use scheme receives the code (RFC 8252 7.1)", async () => {
    const { clientId, user } = await setup({ redirectUris: ['com.example.app:/oauth2redirect'] });
    const { verifier, challenge } = pkce();
    const browser = new Browser(api.url);
    const login = await browser.follow(
      'GET',
      authorizePath({ clientId, redirectUri: 'com.example.app:/oauth2redirect', challenge, method: 'S256', scope: 'read' }),
    );
    const consent = await signIn(browser, login, user.email);
    // The approval's redirect leaves for the app's scheme, so the page's form-action allows it.
    assert.match(consent.headers.get('content-security-policy') ?? '', /form-action 'self' com\.example\.app:/);
    const { redirect } = await authorizeCode(api.url, {
      clientId,
      redirectUri: 'com.example.app:/oauth2redirect',
      challenge,
      email: user.email,
      scope: 'read',
      browser,
    });
    assert.equal(redirect.protocol, 'com.example.app:');
    assert.equal(redirect.searchParams.get('iss'), api.url);
    const res = await exchangeCode(api.url, {
      clientId,
      code: redirect.searchParams.get('code')!,
      redirectUri: 'com.example.app:/oauth2redirect',
      verifier,
    });
    assert.equal(res.status, 200);
  });

  it('success redirect carries code, state and iss; the code is stored hashed', async () => {
    const { clientId, redirectUri, user } = await setup();
    const { challenge } = pkce();
    const { redirect } = await authorizeCode(api.url, {
      clientId,
      redirectUri,
      challenge,
      email: user.email,
      scope: 'read',
      state: 'opaque-state-1',
    });
    assert.equal(`${redirect.origin}${redirect.pathname}`, redirectUri);
    assert.equal(redirect.searchParams.get('state'), 'opaque-state-1');
    assert.equal(redirect.searchParams.get('iss'), api.url);
    const code = redirect.searchParams.get('code')!;
    assert.ok(code.length >= 43);
    const stored = await db()('oauth_codes').where({ client_id: clientId });
    assert.equal(stored.length, 1);
    assert.notEqual(stored[0].code_hash, code);
    assert.equal(JSON.stringify(stored).includes(code), false, 'no plaintext code at rest');
  });

  describe('the pages', () => {
    it('carry anti-framing, no-store and CSP headers on sign-in and consent', async () => {
      const { clientId, redirectUri, user } = await setup();
      const { challenge } = pkce();
      const browser = new Browser(api.url);
      const login = await browser.follow('GET', authorizePath({ clientId, redirectUri, challenge, method: 'S256', scope: 'read' }));
      const consent = await signIn(browser, login, user.email);
      for (const page of [login, consent]) {
        assert.equal(page.status, 200);
        assert.equal(page.headers.get('x-frame-options'), 'DENY');
        assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
        assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
        assert.equal(page.headers.get('cache-control'), 'no-store');
      }
      const cookie = (
        await new Browser(api.url).request('GET', authorizePath({ clientId, redirectUri, challenge, method: 'S256' }))
      ).headers
        .getSetCookie()
        .join('\n');
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Lax/);
    });

    it('show the client name (escaped), trust state and redirect host', async () => {
      const { clientId, redirectUri, user } = await setup({ clientName: '<script>alert(1)</script> Agent' });
      const { challenge } = pkce();
      const browser = new Browser(api.url);
      const login = await browser.follow('GET', authorizePath({ clientId, redirectUri, challenge, method: 'S256', scope: 'read' }));
      assert.ok(!login.html.includes('<script>alert(1)</script>'));
      assert.match(login.html, /&#60;script&#62;alert\(1\)&#60;\/script&#62; Agent/);
      assert.match(login.html, /Unverified/);
      assert.match(login.html, /client\.example\.com/);
      const consent = await signIn(browser, login, user.email);
      assert.match(consent.html, /Unverified/);
    });

    it('a wrong password shows the sign-in page again; an unknown account looks the same', async () => {
      const { clientId, redirectUri, user } = await setup();
      const { challenge } = pkce();
      const browser = new Browser(api.url);
      const login = await browser.follow('GET', authorizePath({ clientId, redirectUri, challenge, method: 'S256' }));
      const wrong = await signIn(browser, login, user.email, 'not the password');
      assert.equal(wrong.status, 401);
      assert.match(wrong.html, /do not match/);
      const unknown = await signIn(browser, wrong, 'nobody@example.com');
      assert.equal(unknown.status, 401);
      assert.match(unknown.html, /do not match/);
    });

    it('refuses an approval without the CSRF token, or from another browser', async () => {
      const { clientId, redirectUri, user, workspace } = await setup();
      const { challenge } = pkce();
      const browser = new Browser(api.url);
      const login = await browser.follow('GET', authorizePath({ clientId, redirectUri, challenge, method: 'S256' }));
      const consent = await signIn(browser, login, user.email);
      const action = formAction(consent.html, 'confirm');
      const forged = await browser.request('POST', action, {
        csrf: 'x'.repeat(22),
        decision: 'approve',
        workspace: workspace.id,
        access: 'full',
      });
      expectErrorPage(forged);
      const elsewhere = await new Browser(api.url).request('POST', action, {
        csrf: csrfOf(consent.html),
        decision: 'approve',
        workspace: workspace.id,
        access: 'full',
      });
      expectErrorPage(elsewhere);
      // Nothing was issued; the real page still works.
      const ok = await browser.request('POST', action, {
        csrf: csrfOf(consent.html),
        decision: 'approve',
        workspace: workspace.id,
        access: 'full',
      });
      assert.equal(ok.status, 303);
      assert.ok(new URL(ok.location!).searchParams.get('code'));
      // Single use: a second submission of the same interaction is refused.
      const again = await browser.request('POST', action, {
        csrf: csrfOf(consent.html),
        decision: 'approve',
        workspace: workspace.id,
        access: 'full',
      });
      expectErrorPage(again);
    });

    it('lock the access level to Read-only when nothing write-side is requested', async () => {
      const { clientId, redirectUri, user } = await setup();
      const { verifier, challenge } = pkce();
      const browser = new Browser(api.url);
      const login = await browser.follow(
        'GET',
        authorizePath({ clientId, redirectUri, challenge, method: 'S256', scope: 'posts:read projects:read offline_access' }),
      );
      const consent = await signIn(browser, login, user.email);
      assert.ok(!consent.html.includes('value="full"'), 'no Full access choice');
      const { redirect } = await authorizeCode(api.url, {
        clientId,
        redirectUri,
        challenge,
        email: user.email,
        scope: 'posts:read projects:read offline_access',
        access: 'full',
        browser,
      });
      const tokens = await exchangeCode(api.url, { clientId, code: redirect.searchParams.get('code')!, redirectUri, verifier });
      assert.equal(tokens.body.scope, 'projects:read posts:read offline_access');
    });

    it('Read-only narrows a write request to its read scopes; Full access grants named-only scopes only when named', async () => {
      const { clientId, redirectUri, user } = await setup();
      const readOnly = await tokenFor(api.url, {
        clientId,
        redirectUri,
        email: user.email,
        scope: 'write posts:publish offline_access',
        access: 'read',
      });
      assert.deepEqual(readOnly.scope.split(' '), [...READ_SCOPES, 'offline_access']);
      const full = await tokenFor(api.url, { clientId, redirectUri, email: user.email, scope: 'write posts:publish', access: 'full' });
      assert.ok(full.scope.split(' ').includes('posts:publish'));
      assert.ok(full.scope.split(' ').includes('posts:write'));
      const noPublish = await tokenFor(api.url, { clientId, redirectUri, email: user.email, scope: 'write', access: 'full' });
      assert.ok(!noPublish.scope.split(' ').includes('posts:publish'));
      assert.ok(!noPublish.scope.split(' ').includes('settings:write'));
      assert.ok(!noPublish.scope.split(' ').some((s) => s.endsWith(':destroy')));
    });

    it('offer a default-project picker only when the workspace has more than one project', async () => {
      const one = await setup({ projects: 1 });
      const { challenge } = pkce();
      let browser = new Browser(api.url);
      let page = await signIn(
        browser,
        await browser.follow('GET', authorizePath({ clientId: one.clientId, redirectUri: one.redirectUri, challenge, method: 'S256' })),
        one.user.email,
      );
      assert.ok(!page.html.includes('name="project"'));
      assert.match(page.html, /Default project: <strong>/);

      const three = await setup({ projects: 3 });
      browser = new Browser(api.url);
      page = await signIn(
        browser,
        await browser.follow('GET', authorizePath({ clientId: three.clientId, redirectUri: three.redirectUri, challenge, method: 'S256' })),
        three.user.email,
      );
      assert.match(page.html, /<select id="project" name="project">/);
      for (const p of three.projects) assert.ok(page.html.includes(`value="${p.id}"`));
      // A project of another workspace is refused, and nothing is issued.
      const bad = await browser.request('POST', formAction(page.html, 'confirm'), {
        csrf: csrfOf(page.html),
        decision: 'approve',
        workspace: three.workspace.id,
        project: one.project.id,
        access: 'read',
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.location, null);
    });

    it('offer every reachable workspace, and the projects of the one picked', async () => {
      const a = await setup({ projects: 2 });
      const b = await workspaceWithKey({ projects: 2, name: 'Second Workspace' });
      const { addMember } = await import('../../admin/provision');
      await addMember({ workspaceId: b.workspace.id, user: a.user.id, role: 'Member', projectIds: [b.projects[1]!.id] });
      const { challenge } = pkce();
      const browser = new Browser(api.url);
      const page = await signIn(
        browser,
        await browser.follow('GET', authorizePath({ clientId: a.clientId, redirectUri: a.redirectUri, challenge, method: 'S256' })),
        a.user.email,
      );
      assert.ok(page.html.includes(`<option value="${a.workspace.id}"`));
      assert.ok(page.html.includes(`<option value="${b.workspace.id}"`));
      const switched = await browser.request(
        'GET',
        `${formAction(page.html, 'confirm').replace(/\/confirm$/, '')}?workspace=${b.workspace.id}`,
      );
      assert.equal(switched.status, 200);
      // A plain member picks among the projects assigned to them only.
      assert.ok(!switched.html.includes('name="project"'));
      assert.match(switched.html, /Default project: <strong>/);
      assert.ok(switched.html.includes(`name="workspace" value="${b.workspace.id}"`));
    });
  });

  describe('welcome back (spec 5.3.2)', () => {
    it('a previously approved identical client and scope set gets a visible page; continuing is a POST', async () => {
      const { clientId, redirectUri, user, workspace } = await setup();
      const browser = new Browser(api.url);
      const first = pkce();
      await authorizeCode(api.url, {
        clientId,
        redirectUri,
        challenge: first.challenge,
        email: user.email,
        scope: 'read posts:write',
        browser,
        access: 'full',
      });

      const second = pkce();
      const page = await browser.follow(
        'GET',
        authorizePath({ clientId, redirectUri, challenge: second.challenge, method: 'S256', scope: 'posts:write read' }),
      );
      assert.equal(page.status, 200);
      assert.match(page.html, /Welcome back/);
      assert.match(page.html, /Full access/);
      assert.ok(page.html.includes(workspace.name));
      assert.match(page.html, /name="mode" value="welcome_back"/);
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      const done = await browser.request('POST', formAction(page.html, 'confirm'), {
        csrf: csrfOf(page.html),
        decision: 'approve',
        mode: 'welcome_back',
      });
      assert.equal(done.status, 303);
      const code = new URL(done.location!).searchParams.get('code')!;
      const tokens = await exchangeCode(api.url, { clientId, code, redirectUri, verifier: second.verifier });
      assert.equal(tokens.status, 200);
      assert.ok(tokens.body.scope.includes('posts:write'));

      // A different scope set asks again; so does prompt=consent.
      const third = await browser.follow(
        'GET',
        authorizePath({ clientId, redirectUri, challenge: second.challenge, method: 'S256', scope: 'read' }),
      );
      assert.doesNotMatch(third.html, /Welcome back/);
      assert.match(third.html, /name="access"/);
      const forced = await browser.follow(
        'GET',
        authorizePath({
          clientId,
          redirectUri,
          challenge: second.challenge,
          method: 'S256',
          scope: 'read posts:write',
          extra: { prompt: 'consent' },
        }),
      );
      assert.doesNotMatch(forced.html, /Welcome back/);
    });

    it('another user of the same browser does not get it', async () => {
      const { clientId, redirectUri, user, workspace } = await setup();
      const browser = new Browser(api.url);
      await authorizeCode(api.url, { clientId, redirectUri, challenge: pkce().challenge, email: user.email, scope: 'read', browser });
      const other = await member(workspace.id, 'Admin');
      const page = await browser.follow(
        'GET',
        authorizePath({ clientId, redirectUri, challenge: pkce().challenge, method: 'S256', scope: 'read' }),
      );
      assert.match(page.html, /Welcome back/);
      const out = await browser.follow('POST', formAction(page.html, 'logout'), { csrf: csrfOf(page.html) });
      assert.match(out.html, /name="password"/);
      const consent = await signIn(browser, out, other.email);
      assert.doesNotMatch(consent.html, /Welcome back/);
    });
  });
});
