import assert from 'node:assert/strict';
import { sha256Hex } from '../../lib/crypto';
import { db } from '../../lib/db';
import { member, workspaceWithKey } from '../support/factories';
import {
  apiGet,
  authorizeCode,
  authorizePath,
  Browser,
  exchangeCode,
  form,
  pkce,
  refresh,
  register,
  useOAuthApi,
  tokenFor,
} from './support';

// POST /oauth/token, /oauth/introspect, /oauth/revoke (spec 5.3.4-5.3.8, 7.3).

describe('OAuth token, introspection and revocation endpoints', () => {
  const api = useOAuthApi();

  const redirectUri = 'https://client.example.com/cb';

  async function setup(opts: { grantTypes?: string[] } = {}) {
    const ws = await workspaceWithKey({ projects: 1 });
    const user = await member(ws.workspace.id, 'Admin');
    const reg = await register(api.url, {
      client_name: 'Token Client',
      redirect_uris: [redirectUri],
      ...(opts.grantTypes ? { grant_types: opts.grantTypes } : {}),
    });
    return { ...ws, user, clientId: reg.body.client_id as string };
  }

  async function codeFor(s: { clientId: string; user: { email: string } }, scope = 'read write offline_access', browser?: Browser) {
    const { verifier, challenge } = pkce();
    const { redirect } = await authorizeCode(api.url, {
      clientId: s.clientId,
      redirectUri,
      challenge,
      email: s.user.email,
      scope,
      browser,
    });
    return { code: redirect.searchParams.get('code')!, verifier };
  }

  function expectOAuthError(res: { status: number; body: any; headers: Headers }, status: number, code: string) {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.error.code, code);
    assert.match(res.body.error.request_id, /^req_/);
    assert.equal(typeof res.body.error.message, 'string');
    assert.ok(res.body.error.docs_url);
    assert.equal(res.headers.get('cache-control'), 'no-store');
  }

  describe('authorization_code grant', () => {
    it('issues svc_oat_ access tokens for an hour, a refresh token with offline_access, the expanded scope; stores only hashes', async () => {
      const s = await setup();
      const { code, verifier } = await codeFor(s, 'read read posts:read offline_access');
      const res = await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.match(res.body.access_token, /^svc_oat_[A-Za-z0-9_-]{43}$/);
      assert.match(res.body.refresh_token, /^svc_ort_/);
      assert.equal(res.body.token_type, 'Bearer');
      assert.ok(res.body.expires_in > 3590 && res.body.expires_in <= 3600);
      // Aliases expanded and de-duplicated (spec 5.2 rule 4).
      assert.equal(
        res.body.scope,
        'workspace:read projects:read notes:read posts:read sources:read knowledge:read jobs:read analytics:read media:read offline_access',
      );
      const row = await db()('oauth_access_tokens')
        .where({ token_hash: sha256Hex(res.body.access_token) })
        .first();
      assert.match(row.id, /^oat_/);
      const dump = JSON.stringify([
        await db()('oauth_access_tokens').where({ client_id: s.clientId }),
        await db()('oauth_refresh_tokens').where({ family_id: row.family_id }),
        await db()('oauth_codes').where({ client_id: s.clientId }),
      ]);
      for (const secret of [res.body.access_token, res.body.refresh_token, code]) assert.equal(dump.includes(secret), false);
    });

    it('issues no refresh token without offline_access', async () => {
      const s = await setup();
      const { code, verifier } = await codeFor(s, 'read');
      const res = await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier });
      assert.equal(res.status, 200);
      assert.equal(res.body.refresh_token, undefined);
    });

    it('accepts a JSON body too', async () => {
      const s = await setup();
      const { code, verifier } = await codeFor(s, 'read');
      const res = await fetch(`${api.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'authorization_code',
          client_id: s.clientId,
          code,
          redirect_uri: redirectUri,
          code_verifier: verifier,
        }),
      });
      assert.equal(res.status, 200);
      assert.match(((await res.json()) as any).access_token, /^svc_oat_/);
    });

    it('code reuse gives invalid_grant and revokes what the code issued', async () => {
      const s = await setup();
      const { code, verifier } = await codeFor(s);
      const first = await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier });
      assert.equal(first.status, 200);
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', first.body.access_token)).status, 200);
      const again = await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier });
      expectOAuthError(again, 400, 'invalid_grant');
      const me = await apiGet(api.url, '/v1/workspaces/me', first.body.access_token);
      assert.equal(me.status, 401);
      assert.equal(me.body.error.code, 'invalid_token');
      expectOAuthError(await refresh(api.url, { clientId: s.clientId, refreshToken: first.body.refresh_token }), 400, 'invalid_grant');
    });

    it('concurrent exchanges of one code: exactly one wins, and its tokens are revoked', async () => {
      const s = await setup();
      const { code, verifier } = await codeFor(s);
      const results = await Promise.all(
        Array.from({ length: 5 }, () => exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier })),
      );
      const ok = results.filter((r) => r.status === 200);
      assert.equal(ok.length, 1, results.map((r) => r.status).join(','));
      for (const r of results.filter((x) => x.status !== 200)) assert.equal(r.body.error.code, 'invalid_grant');
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', ok[0]!.body.access_token)).status, 401);
    });

    it('an expired code gives invalid_grant', async () => {
      const s = await setup();
      const { code, verifier } = await codeFor(s);
      await db()('oauth_codes')
        .where({ code_hash: sha256Hex(code) })
        .update({ expires_at: new Date(Date.now() - 1000) });
      expectOAuthError(await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier }), 400, 'invalid_grant');
    });

    it('codes live 10 minutes', async () => {
      const s = await setup();
      const { code } = await codeFor(s);
      const row = await db()('oauth_codes')
        .where({ code_hash: sha256Hex(code) })
        .first();
      const life = row.expires_at.getTime() - row.created_at.getTime();
      assert.ok(Math.abs(life - 600_000) < 2000, String(life));
    });

    it('PKCE: a missing verifier is invalid_request, a wrong one invalid_grant (and the code survives for its holder)', async () => {
      const s = await setup();
      const { code, verifier } = await codeFor(s);
      expectOAuthError(
        await form(api.url, '/oauth/token', { grant_type: 'authorization_code', client_id: s.clientId, code, redirect_uri: redirectUri }),
        400,
        'invalid_request',
      );
      expectOAuthError(
        await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier: pkce().verifier }),
        400,
        'invalid_grant',
      );
      expectOAuthError(await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier: 'short' }), 400, 'invalid_grant');
      assert.equal((await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier })).status, 200);
    });

    it('a code is bound to its client and redirect URI', async () => {
      const s = await setup();
      const other = await register(api.url, { redirect_uris: [redirectUri] });
      const { code, verifier } = await codeFor(s);
      expectOAuthError(await exchangeCode(api.url, { clientId: other.body.client_id, code, redirectUri, verifier }), 400, 'invalid_grant');
      expectOAuthError(
        await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri: 'https://client.example.com/other', verifier }),
        400,
        'invalid_grant',
      );
      expectOAuthError(
        await exchangeCode(api.url, { clientId: s.clientId, code: 'not-a-code', redirectUri, verifier }),
        400,
        'invalid_grant',
      );
    });

    it('client and request errors: invalid_request, invalid_client (401), unsupported_grant_type, unauthorized_client', async () => {
      const s = await setup();
      expectOAuthError(
        await form(api.url, '/oauth/token', { grant_type: 'authorization_code', code: 'x', redirect_uri: redirectUri, code_verifier: 'y' }),
        400,
        'invalid_request',
      );
      expectOAuthError(
        await form(api.url, '/oauth/token', { grant_type: 'authorization_code', client_id: 'cli_unknown', code: 'x' }),
        401,
        'invalid_client',
      );
      expectOAuthError(
        await form(api.url, '/oauth/token', {
          grant_type: 'authorization_code',
          client_id: s.clientId,
          client_secret: 's3cret',
          code: 'x',
        }),
        401,
        'invalid_client',
      );
      expectOAuthError(await form(api.url, '/oauth/token', { client_id: s.clientId }), 400, 'invalid_request');
      expectOAuthError(
        await form(api.url, '/oauth/token', { grant_type: 'password', client_id: s.clientId, username: 'a', password: 'b' }),
        400,
        'unsupported_grant_type',
      );
      expectOAuthError(
        await form(api.url, '/oauth/token', { grant_type: 'client_credentials', client_id: s.clientId }),
        400,
        'unsupported_grant_type',
      );
      const dup = await fetch(`${api.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `grant_type=refresh_token&client_id=${s.clientId}&client_id=${s.clientId}`,
      });
      assert.equal(dup.status, 400);
      assert.equal(((await dup.json()) as any).error.code, 'invalid_request');

      const noRefresh = await setup({ grantTypes: ['authorization_code'] });
      const { code, verifier } = await codeFor(noRefresh);
      const tokens = await exchangeCode(api.url, { clientId: noRefresh.clientId, code, redirectUri, verifier });
      assert.equal(tokens.body.refresh_token, undefined, 'no refresh token for a client without the grant');
      expectOAuthError(await refresh(api.url, { clientId: noRefresh.clientId, refreshToken: 'svc_ort_x' }), 400, 'unauthorized_client');
    });
  });

  describe('refresh_token grant', () => {
    it('rotates on every use, with a fresh hour', async () => {
      const s = await setup();
      const t0 = await tokenFor(api.url, { clientId: s.clientId, redirectUri, email: s.user.email });
      const r1 = await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! });
      assert.equal(r1.status, 200, JSON.stringify(r1.body));
      assert.notEqual(r1.body.refresh_token, t0.refresh_token);
      assert.notEqual(r1.body.access_token, t0.access_token);
      assert.ok(r1.body.expires_in > 3590);
      assert.equal(r1.body.scope, t0.scope);
      const r2 = await refresh(api.url, { clientId: s.clientId, refreshToken: r1.body.refresh_token });
      assert.equal(r2.status, 200);
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', r2.body.access_token)).status, 200);
    });

    it('a replay within the grace window returns the same new pair; after it, reuse revokes the family and forces consent', async () => {
      const s = await setup();
      const browser = new Browser(api.url);
      const { code, verifier } = await codeFor(s, 'read write offline_access', browser);
      const consentPage = () =>
        browser.follow(
          'GET',
          authorizePath({
            clientId: s.clientId,
            redirectUri,
            challenge: pkce().challenge,
            method: 'S256',
            scope: 'read write offline_access',
          }),
        );
      const t0 = (await exchangeCode(api.url, { clientId: s.clientId, code, redirectUri, verifier })).body;
      const r1 = await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token });
      const replay = await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token });
      assert.equal(replay.status, 200, JSON.stringify(replay.body));
      assert.equal(replay.body.access_token, r1.body.access_token);
      assert.equal(replay.body.refresh_token, r1.body.refresh_token);
      assert.equal(replay.body.scope, r1.body.scope);

      // The welcome-back page is offered before the reuse...
      const before = await consentPage();
      assert.match(before.html, /Welcome back/);

      // ...15 seconds later the same presentation is reuse.
      await db()('oauth_refresh_tokens')
        .where({ token_hash: sha256Hex(t0.refresh_token) })
        .update({ rotated_at: new Date(Date.now() - 16_000) });
      expectOAuthError(await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token }), 400, 'invalid_grant');
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', r1.body.access_token)).status, 401, 'the family is revoked');
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', t0.access_token)).status, 401);
      expectOAuthError(await refresh(api.url, { clientId: s.clientId, refreshToken: r1.body.refresh_token }), 400, 'invalid_grant');
      const after = await consentPage();
      assert.doesNotMatch(after.html, /Welcome back/, 'the remembered approval is dropped');
      assert.match(after.html, /name="access"/);
    });

    it('a replay after the new refresh token was used is reuse, even inside the window', async () => {
      const s = await setup();
      const t0 = await tokenFor(api.url, { clientId: s.clientId, redirectUri, email: s.user.email });
      const r1 = await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! });
      const r2 = await refresh(api.url, { clientId: s.clientId, refreshToken: r1.body.refresh_token });
      assert.equal(r2.status, 200);
      expectOAuthError(await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! }), 400, 'invalid_grant');
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', r2.body.access_token)).status, 401);
    });

    it('concurrent refreshes with one token all get the same pair', async () => {
      const s = await setup();
      const t0 = await tokenFor(api.url, { clientId: s.clientId, redirectUri, email: s.user.email });
      const results = await Promise.all(
        Array.from({ length: 4 }, () => refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! })),
      );
      for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(new Set(results.map((r) => r.body.refresh_token)).size, 1);
      assert.equal(new Set(results.map((r) => r.body.access_token)).size, 1);
    });

    it('narrows scope on request; wider or unknown scope is invalid_scope; the refresh token keeps the granted scope', async () => {
      const s = await setup();
      const t0 = await tokenFor(api.url, {
        clientId: s.clientId,
        redirectUri,
        email: s.user.email,
        scope: 'read posts:write offline_access',
      });
      const narrow = await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token!, scope: 'posts:read projects:read' });
      assert.equal(narrow.status, 200, JSON.stringify(narrow.body));
      assert.equal(narrow.body.scope, 'projects:read posts:read');
      const team = await apiGet(api.url, '/v1/team', narrow.body.access_token);
      assert.equal(team.status, 403);
      assert.equal(team.body.error.code, 'scope_missing');
      assert.equal(team.body.error.details.required_scope, 'workspace:read');
      // Aliases are expanded before the comparison: `read` is within the grant.
      const alias = await refresh(api.url, { clientId: s.clientId, refreshToken: narrow.body.refresh_token, scope: 'read' });
      assert.equal(alias.status, 200);
      expectOAuthError(
        await refresh(api.url, { clientId: s.clientId, refreshToken: alias.body.refresh_token, scope: 'posts:read posts:publish' }),
        400,
        'invalid_scope',
      );
      expectOAuthError(
        await refresh(api.url, { clientId: s.clientId, refreshToken: alias.body.refresh_token, scope: 'write' }),
        400,
        'invalid_scope',
      );
      expectOAuthError(
        await refresh(api.url, { clientId: s.clientId, refreshToken: alias.body.refresh_token, scope: 'posts:fly' }),
        400,
        'invalid_scope',
      );
      // Refused requests do not consume the token; without scope the full grant comes back.
      const full = await refresh(api.url, { clientId: s.clientId, refreshToken: alias.body.refresh_token });
      assert.equal(full.status, 200);
      assert.equal(full.body.scope, t0.scope);
    });

    it('refuses a token of another client, an unknown one and an expired one', async () => {
      const s = await setup();
      const other = await register(api.url, { redirect_uris: [redirectUri] });
      const t0 = await tokenFor(api.url, { clientId: s.clientId, redirectUri, email: s.user.email });
      expectOAuthError(await refresh(api.url, { clientId: other.body.client_id, refreshToken: t0.refresh_token! }), 400, 'invalid_grant');
      expectOAuthError(await refresh(api.url, { clientId: s.clientId, refreshToken: 'svc_ort_' + 'a'.repeat(43) }), 400, 'invalid_grant');
      expectOAuthError(await form(api.url, '/oauth/token', { grant_type: 'refresh_token', client_id: s.clientId }), 400, 'invalid_request');
      await db()('oauth_refresh_tokens')
        .where({ token_hash: sha256Hex(t0.refresh_token!) })
        .update({ expires_at: new Date(Date.now() - 1000) });
      expectOAuthError(await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! }), 400, 'invalid_grant');
    });
  });

  describe('introspection (RFC 7662)', () => {
    it('describes active tokens and says only { active: false } otherwise', async () => {
      const s = await setup();
      const t0 = await tokenFor(api.url, { clientId: s.clientId, redirectUri, email: s.user.email, scope: 'read offline_access' });
      const active = await form(api.url, '/oauth/introspect', { token: t0.access_token });
      assert.equal(active.status, 200);
      assert.equal(active.body.active, true);
      assert.equal(active.body.scope, t0.scope);
      assert.equal(active.body.client_id, s.clientId);
      assert.equal(active.body.sub, s.user.id);
      assert.equal(active.body.token_type, 'Bearer');
      assert.equal(active.body.workspace_id, s.workspace.id);
      assert.ok(active.body.exp - active.body.iat === 3600);
      const rt = await form(api.url, '/oauth/introspect', { token: t0.refresh_token!, token_type_hint: 'refresh_token' });
      assert.equal(rt.body.active, true);
      assert.equal(rt.body.token_type, 'refresh_token');

      await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! });
      for (const token of [t0.refresh_token!, 'svc_oat_' + 'b'.repeat(43), 'garbage']) {
        const res = await form(api.url, '/oauth/introspect', { token });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { active: false });
      }
      await db()('oauth_access_tokens')
        .where({ token_hash: sha256Hex(t0.access_token) })
        .update({ expires_at: new Date(Date.now() - 1000) });
      assert.deepEqual((await form(api.url, '/oauth/introspect', { token: t0.access_token })).body, { active: false });
      expectOAuthError(await form(api.url, '/oauth/introspect', {}), 400, 'invalid_request');
    });
  });

  describe('revocation (RFC 7009)', () => {
    it('requires a known client_id', async () => {
      expectOAuthError(await form(api.url, '/oauth/revoke', { token: 'svc_oat_x' }), 400, 'invalid_request');
      expectOAuthError(await form(api.url, '/oauth/revoke', { token: 'svc_oat_x', client_id: 'cli_nope' }), 401, 'invalid_client');
    });

    it('revoking an access token kills only it; 200 with an empty body', async () => {
      const s = await setup();
      const t0 = await tokenFor(api.url, { clientId: s.clientId, redirectUri, email: s.user.email });
      const res = await form(api.url, '/oauth/revoke', { token: t0.access_token, client_id: s.clientId, token_type_hint: 'access_token' });
      assert.equal(res.status, 200);
      assert.equal(res.text, '');
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', t0.access_token)).status, 401);
      assert.deepEqual((await form(api.url, '/oauth/introspect', { token: t0.access_token })).body, { active: false });
      assert.equal(
        (await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! })).status,
        200,
        'the refresh token survives',
      );
    });

    it('revoking a refresh token kills the whole family', async () => {
      const s = await setup();
      const t0 = await tokenFor(api.url, { clientId: s.clientId, redirectUri, email: s.user.email });
      const r1 = await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! });
      const res = await form(api.url, '/oauth/revoke', { token: r1.body.refresh_token, client_id: s.clientId });
      assert.equal(res.status, 200);
      assert.equal(res.text, '');
      for (const token of [t0.access_token, r1.body.access_token])
        assert.equal((await apiGet(api.url, '/v1/workspaces/me', token)).status, 401);
      expectOAuthError(await refresh(api.url, { clientId: s.clientId, refreshToken: r1.body.refresh_token }), 400, 'invalid_grant');
    });

    it('a client revokes only its own tokens, and unknown tokens still answer 200', async () => {
      const s = await setup();
      const other = await register(api.url, { redirect_uris: [redirectUri] });
      const t0 = await tokenFor(api.url, { clientId: s.clientId, redirectUri, email: s.user.email });
      for (const token of [t0.access_token, t0.refresh_token!]) {
        const res = await form(api.url, '/oauth/revoke', { token, client_id: other.body.client_id });
        assert.equal(res.status, 200);
        assert.equal(res.text, '');
      }
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', t0.access_token)).status, 200);
      assert.equal((await form(api.url, '/oauth/revoke', { token: 'svc_oat_' + 'c'.repeat(43), client_id: s.clientId })).status, 200);
      assert.equal((await form(api.url, '/oauth/revoke', { token: 'whatever', client_id: s.clientId })).status, 200);
    });
  });

  describe('token lifetime (spec 5.3.4, 8: access tokens live 1 hour)', () => {
    it('answers expires_in 3600 on the code and the refresh grant, and the stored expiry is issuance + 3600 s', async () => {
      const s = await setup();
      const t0 = await tokenFor(api.url, { clientId: s.clientId, redirectUri, email: s.user.email });
      assert.equal(t0.expires_in, 3600);
      const r1 = await refresh(api.url, { clientId: s.clientId, refreshToken: t0.refresh_token! });
      assert.equal(r1.status, 200, JSON.stringify(r1.body));
      assert.equal(r1.body.expires_in, 3600);
      for (const token of [t0.access_token, r1.body.access_token]) {
        const row = await db()('oauth_access_tokens')
          .where({ token_hash: sha256Hex(token) })
          .first();
        assert.equal(row.expires_at.getTime() - row.created_at.getTime(), 3600_000, 'the row agrees with expires_in');
        const seen = await form(api.url, '/oauth/introspect', { token });
        assert.equal(seen.body.active, true);
        assert.equal(seen.body.exp - seen.body.iat, 3600);
      }
    });
  });
});
