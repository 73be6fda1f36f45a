// `bin/admin oauth token --expires-in SECONDS` (issue 29 item 7): a short-lived access token, and
// with offline_access a refresh token, so a client author can watch their client refresh.

import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { client, useApi } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { fails, ok } from '../support/admin';

describe('operator CLI: short-lived OAuth tokens (bin/admin oauth token --expires-in)', function () {
  this.timeout(120_000);
  const api = useApi();

  async function registeredClient(): Promise<string> {
    const reg = await fetch(`${api.url}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Refresh test', redirect_uris: ['http://127.0.0.1:9/callback'] }),
    });
    assert.equal(reg.status, 201);
    return ((await reg.json()) as { client_id: string }).client_id;
  }

  it('mints a token that expires after the given seconds, with a refresh token that works', async () => {
    const { workspace } = await workspaceWithKey();
    const user = await member(workspace.id, 'Admin');
    const clientId = await registeredClient();

    const t = await ok([
      'oauth',
      'token',
      '--user',
      user.id,
      '--client',
      clientId,
      '--scopes',
      'workspace:read,offline_access',
      '--expires-in',
      '2',
    ]);
    assert.equal(t.expires_in, 2);
    assert.match(t.refresh_token, /^svc_ort_/);
    assert.ok(Date.parse(t.expiresAt) - Date.now() <= 2_000);
    assert.equal((await client(api.url, t.access_token)('GET', '/v1/workspaces/me')).status, 200);

    await sleep(2_500);
    const expired = await client(api.url, t.access_token)('GET', '/v1/workspaces/me');
    assert.equal(expired.status, 401, JSON.stringify(expired.body));

    const refreshed = await fetch(`${api.url}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: clientId }),
    });
    const body = (await refreshed.json()) as { access_token: string; expires_in: number; refresh_token: string };
    assert.equal(refreshed.status, 200, JSON.stringify(body));
    // A refresh issues an ordinary token: the configured life, not the operator's.
    assert.equal(body.expires_in, 3600);
    assert.equal((await client(api.url, body.access_token)('GET', '/v1/workspaces/me')).status, 200);

    // Without offline_access there is no refresh token, as in the code exchange (spec 5.3.4).
    const plain = await ok(['oauth', 'token', '--user', user.id, '--client', clientId, '--scopes', 'workspace:read', '--expires-in', '60']);
    assert.equal(plain.expires_in, 60);
    assert.equal(plain.refresh_token, undefined);
    const standard = await ok(['oauth', 'token', '--user', user.id, '--client', clientId, '--scopes', 'workspace:read']);
    assert.equal(standard.expires_in, 3600);
  });

  it('refuses a life of zero, longer than the configured one, or not a number (exit 2)', async () => {
    const base = ['oauth', 'token', '--user', 'a@example.com', '--client', 'cli_x', '--scopes', 'read'];
    await fails([...base, '--expires-in', '0'], 2, /--expires-in must be at least 1/);
    await fails([...base, '--expires-in', 'soon'], 2, /--expires-in must be a whole number/);
    await fails([...base, '--expires-in', '3601'], 2, /--expires-in must be at most 3600/);
  });
});
