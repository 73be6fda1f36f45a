import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { db } from '../../lib/db';
import {
  Browser,
  authorizeCode,
  authorizePath,
  csrfOf,
  exchangeCode,
  form,
  formAction,
  pkce,
  refresh,
  register,
  signIn,
  useOAuthApi,
  tokenFor,
} from '../oauth/support';
import { member, workspaceWithKey } from '../support/factories';

// The OAuth attack table (RFC 6749 10, RFC 7636, RFC 9700 4): what test/oauth already proves
// (PKCE missing/plain at /authorize, code replay, code of another client, refresh grace and
// family revocation, consent CSRF from another browser, framing headers, iss, scope widening,
// resource binding) is completed here with the tampering variants an attacker iterates over.
// Every attempt is refused with the RFC's error, and a refused attempt burns nothing of the
// legitimate holder's.

const REGISTERED = 'https://client.example.com/cb';

/** Redirect URIs an attacker presents instead of the registered one (exact match, RFC 9700 4.1.3). */
const TAMPERED: [string, string][] = [
  ['prefix of the path', 'https://client.example.com/c'],
  ['path suffix', 'https://client.example.com/cb/evil'],
  ['trailing slash', 'https://client.example.com/cb/'],
  ['dot segment', 'https://client.example.com/cb/../cb'],
  ['encoded dot segment', 'https://client.example.com/cb/%2e%2e/cb'],
  ['encoded slash', 'https://client.example.com%2Fcb'],
  ['upper-case path', 'https://client.example.com/CB'],
  ['upper-case host', 'https://CLIENT.example.com/cb'],
  ['upper-case scheme', 'HTTPS://client.example.com/cb'],
  ['explicit default port', 'https://client.example.com:443/cb'],
  ['fragment', 'https://client.example.com/cb#frag'],
  ['empty fragment', 'https://client.example.com/cb#'],
  ['empty query', 'https://client.example.com/cb?'],
  ['open redirect parameter on the allowed host', 'https://client.example.com/cb?next=https://evil.example.com/'],
  ['userinfo naming the allowed host', 'https://client.example.com@evil.example.com/cb'],
  ['allowed host as a subdomain of the attacker', 'https://client.example.com.evil.example.com/cb'],
  ['host suffix', 'https://evilclient.example.com/cb'],
  ['backslash', 'https://client.example.com\\@evil.example.com/cb'],
  ['trailing dot in host', 'https://client.example.com./cb'],
  ['IDN look-alike', 'https://clіent.example.com/cb'],
  ['whitespace', ' https://client.example.com/cb'],
  ['javascript scheme', 'javascript://client.example.com/cb%0aalert(1)'],
  ['data scheme', 'data:text/html,<script>alert(1)</script>'],
];

describe('OAuth attack table (RFC 6749 10, RFC 7636, RFC 9700)', function () {
  this.timeout(120_000);
  const api = useOAuthApi();
  let cases = 0;
  after(async () => {
    console.log(`      OAuth attack cases: ${cases}`);
  });

  async function setup() {
    const ws = await workspaceWithKey();
    const user = await member(ws.workspace.id, 'Admin');
    const reg = await register(api.url, { client_name: 'Attacked client', redirect_uris: [REGISTERED] });
    assert.equal(reg.status, 201);
    return { ...ws, user, clientId: reg.body.client_id as string };
  }

  function expectOAuthError(res: { status: number; body: any }, status: number, code: string, what: string) {
    cases++;
    assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, code, what);
  }

  /** A refresh that must fail with invalid_grant. */
  async function refreshRefused(clientId: string, refreshToken: string, what: string) {
    expectOAuthError(await refresh(api.url, { clientId, refreshToken }), 400, 'invalid_grant', what);
  }

  async function codeFor(s: { clientId: string; user: { email: string } }) {
    const { verifier, challenge } = pkce();
    const { redirect } = await authorizeCode(api.url, {
      clientId: s.clientId,
      redirectUri: REGISTERED,
      challenge,
      email: s.user.email,
      scope: 'read write offline_access',
    });
    return { code: redirect.searchParams.get('code')!, verifier, challenge };
  }

  it(`refuses ${TAMPERED.length + 1} tampered redirect URIs at /oauth/authorize with an error page, never a redirect`, async () => {
    const s = await setup();
    const { challenge } = pkce();
    const twice = `${authorizePath({ clientId: s.clientId, redirectUri: REGISTERED, challenge, method: 'S256' })}&redirect_uri=${encodeURIComponent('https://evil.example.com/cb')}`;
    for (const [label, path] of [
      ...TAMPERED.map(([l, uri]) => [l, authorizePath({ clientId: s.clientId, redirectUri: uri, challenge, method: 'S256' })]),
      ['the registered URI and a second redirect_uri', twice],
    ]) {
      const res = await new Browser(api.url).request('GET', path);
      cases++;
      assert.equal(res.status, 400, `${label}: ${res.status} ${res.location}`);
      assert.equal(res.location, null, `${label}: an untrusted redirect URI is never redirected to`);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/, label);
    }
  });

  it('refuses a code exchanged with a tampered redirect URI (invalid_grant), and the holder can still use it', async () => {
    const s = await setup();
    const { code, verifier } = await codeFor(s);
    for (const [label, uri] of TAMPERED) {
      expectOAuthError(
        await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri: uri, verifier }),
        400,
        'invalid_grant',
        label,
      );
    }
    const ok = await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri: REGISTERED, verifier });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it('PKCE at /oauth/authorize: other methods than S256 and malformed challenges go back as invalid_request with iss', async () => {
    const s = await setup();
    const { challenge, verifier } = pkce();
    for (const [label, c, m] of [
      ['lower-case s256', challenge, 's256'],
      ['S512', challenge, 'S512'],
      ['plain', verifier, 'plain'],
      ['empty method', challenge, ''],
      ['empty challenge', '', 'S256'],
      ['challenge with padding', `${challenge.slice(0, 42)}=`, 'S256'],
      ['challenge too long', 'a'.repeat(129), 'S256'],
      ['challenge with forbidden characters', `${challenge.slice(0, 40)}+/=`, 'S256'],
    ] as const) {
      const res = await new Browser(api.url).request(
        'GET',
        authorizePath({ clientId: s.clientId, redirectUri: REGISTERED, challenge: c, method: m }),
      );
      cases++;
      assert.equal(res.status, 303, `${label}: ${res.status} ${res.html.slice(0, 200)}`);
      const loc = new URL(res.location!);
      assert.equal(`${loc.origin}${loc.pathname}`, REGISTERED, label);
      assert.equal(loc.searchParams.get('error'), 'invalid_request', label);
      assert.equal(loc.searchParams.get('iss'), api.url, label);
      assert.equal(loc.searchParams.get('code'), null, label);
    }
  });

  it("PKCE at /oauth/token: the challenge as verifier (plain downgrade), another flow's verifier, empty, short and long verifiers are invalid_grant or invalid_request", async () => {
    const s = await setup();
    const { code, verifier, challenge } = await codeFor(s);
    const other = pkce();
    for (const [label, v, status, err] of [
      ['the challenge itself', challenge, 400, 'invalid_grant'],
      ["another flow's verifier", other.verifier, 400, 'invalid_grant'],
      ["the verifier's hash in hex", createHash('sha256').update(verifier).digest('hex'), 400, 'invalid_grant'],
      ['the verifier with a character changed', `${verifier.slice(0, -1)}${verifier.endsWith('A') ? 'B' : 'A'}`, 400, 'invalid_grant'],
      ['42 characters', verifier.slice(0, 42), 400, 'invalid_grant'],
      ['129 characters', verifier.padEnd(129, 'x'), 400, 'invalid_grant'],
    ] as const) {
      const res = await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri: REGISTERED, verifier: v });
      expectOAuthError(res, status, err, label);
    }
    const empty = await form(api.url, '/oauth/token', {
      grant_type: 'authorization_code',
      client_id: s.clientId,
      code,
      redirect_uri: REGISTERED,
      code_verifier: '',
    });
    cases++;
    assert.equal(empty.status, 400);
    assert.ok(['invalid_request', 'invalid_grant'].includes(empty.body.error.code), JSON.stringify(empty.body));
    assert.equal(
      (await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri: REGISTERED, verifier })).status,
      200,
      'the holder still exchanges it',
    );
  });

  it('a code stolen by another client is refused even with the right verifier, and replaying a used code revokes what it issued', async () => {
    const s = await setup();
    const thief = await register(api.url, { client_name: 'Thief', redirect_uris: [REGISTERED] });
    const { code, verifier } = await codeFor(s);
    expectOAuthError(
      await exchangeCode(api.url, { clientId: thief.body.client_id, code, redirectUri: REGISTERED, verifier }),
      400,
      'invalid_grant',
      'another client',
    );
    const first = await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri: REGISTERED, verifier });
    assert.equal(first.status, 200);
    expectOAuthError(
      await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri: REGISTERED, verifier }),
      400,
      'invalid_grant',
      'replay',
    );
    const me = await fetch(`${api.url}/v1/workspaces/me`, { headers: { Authorization: `Bearer ${first.body.access_token}` } });
    assert.equal(me.status, 401, 'RFC 6749 4.1.2: the tokens of a replayed code are revoked');
    await refreshRefused(s.clientId, first.body.refresh_token, 'refresh after code replay');
  });

  it('refresh: replay inside the grace gives the same pair; after it the family is revoked; wider scopes are invalid_scope', async () => {
    const s = await setup();
    const t0 = await tokenFor(api.url, {
      clientId: s.clientId,
      redirectUri: REGISTERED,
      email: s.user.email,
      scope: 'read offline_access',
    });
    for (const wider of [
      'write',
      'posts:write',
      'webhooks:manage',
      'posts:publish',
      'posts:destroy',
      'read offline_access settings:write',
      'read\u0000write',
    ]) {
      expectOAuthError(
        await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token!, scope: wider }),
        400,
        'invalid_scope',
        `widening to ${JSON.stringify(wider)}`,
      );
    }
    const r1 = await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! });
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    const inside = await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! });
    assert.deepEqual([inside.body.access_token, inside.body.refresh_token], [r1.body.access_token, r1.body.refresh_token]);
    const hash = createHash('sha256').update(t0.refresh_token!).digest('hex');
    await db()('oauth_refresh_tokens')
      .where({ token_hash: hash })
      .update({ rotated_at: new Date(Date.now() - 16_000) });
    await refreshRefused(s.clientId, t0.refresh_token!, 'after the grace');
    await refreshRefused(s.clientId, r1.body.refresh_token, 'the family is revoked');
  });

  it('consent and sign-in forms: a CSRF token of another interaction, or a missing or forged one never issues a code', async () => {
    const s = await setup();
    const browser = new Browser(api.url);
    const login = await browser.follow(
      'GET',
      authorizePath({ clientId: s.clientId, redirectUri: REGISTERED, challenge: pkce().challenge, method: 'S256' }),
    );
    // Sign-in without its CSRF token.
    const noCsrf = await browser.request('POST', formAction(login.html, 'login'), {
      email: s.user.email,
      password: 'correct horse battery staple',
    });
    cases++;
    assert.ok(noCsrf.status === 400 || noCsrf.status === 403, `sign-in without csrf: ${noCsrf.status}`);
    assert.equal(noCsrf.location, null);
    const consentA = await signIn(
      browser,
      await browser.follow(
        'GET',
        authorizePath({ clientId: s.clientId, redirectUri: REGISTERED, challenge: pkce().challenge, method: 'S256' }),
      ),
      s.user.email,
    );
    const consentB = await browser.follow(
      'GET',
      authorizePath({ clientId: s.clientId, redirectUri: REGISTERED, challenge: pkce().challenge, method: 'S256', state: 'other' }),
    );
    const fields = { decision: 'approve', workspace: s.workspace.id, access: 'full' };
    for (const [label, action, csrf] of [
      ['the CSRF token of another interaction', formAction(consentB.html, 'confirm'), csrfOf(consentA.html)],
      ['no CSRF token', formAction(consentA.html, 'confirm'), ''],
      ['a CSRF token of the right length', formAction(consentA.html, 'confirm'), 'A'.repeat(csrfOf(consentA.html).length)],
    ] as const) {
      const res = await browser.request('POST', action, { ...fields, csrf });
      cases++;
      assert.equal(res.status, 400, `${label}: ${res.status} ${res.location}`);
      assert.equal(res.location, null, label);
    }
    // The page is not framable, so a clickjacking overlay cannot carry the real form either.
    for (const page of [login, consentA, consentB]) {
      cases++;
      assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
      assert.equal(page.headers.get('x-frame-options')?.toUpperCase(), 'DENY');
    }
  });
});
