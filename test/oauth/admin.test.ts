import assert from 'node:assert/strict';
import { createWorkspace } from '../../admin/provision';
import { admin } from '../support/admin';
import { member, workspaceWithKey } from '../support/factories';
import { apiGet, register, useOAuthApi, tokenFor } from './support';

// The operator commands of the OAuth module, run as an operator would: bin/admin in a child process.

describe('bin/admin: agency owners and OAuth grants', function () {
  this.timeout(60_000);
  const api = useOAuthApi();

  it('agency add-owner, grant list, grant revoke', async () => {
    const agency = await createWorkspace({ name: 'CLI Agency', plan: 'BUSINESS' });
    const clientWs = await createWorkspace({ name: 'CLI Client', plan: 'FREE' });
    const user = await member(agency.id, 'Admin');

    const owner = await admin(['agency', 'add-owner', '--user', user.email, '--workspace', clientWs.id, '--agency', agency.id]);
    assert.equal(owner.code, 0, owner.stderr);
    assert.deepEqual(
      owner.json.clientWorkspaces.map((w: { id: string }) => w.id),
      [clientWs.id],
    );

    const redirectUri = 'https://cli.example.com/cb';
    const clientId = (await register(api.url, { client_name: 'CLI Client App', redirect_uris: [redirectUri] })).body.client_id;
    const tokens = await tokenFor(api.url, {
      clientId,
      redirectUri,
      email: user.email,
      scope: 'read offline_access',
      access: 'read',
      workspace: clientWs.id,
    });
    assert.equal((await apiGet(api.url, '/v1/workspaces/me', tokens.access_token)).body.data.workspace.id, clientWs.id);

    const listed = await admin(['grant', 'list', '--user', user.email]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.json.grants.length, 1);
    assert.equal(listed.json.grants[0].workspaceId, clientWs.id);
    assert.equal(listed.json.grants[0].clientName, 'CLI Client App');

    const revoked = await admin(['grant', 'revoke', '--user', user.email, '--all']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.deepEqual(revoked.json.revoked, [listed.json.grants[0].id]);
    // Another process revoked it: this one learns through the Redis channel (or the short cache lifetime).
    let status = 0;
    for (let i = 0; i < 50 && status !== 401; i++) {
      status = (await apiGet(api.url, '/v1/workspaces/me', tokens.access_token)).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 401);
  });

  it('refuses bad command lines and impossible grants', async () => {
    const ws = await workspaceWithKey();
    const user = await member(ws.workspace.id, 'Member');
    const noFlag = await admin(['grant', 'revoke', '--user', user.email]);
    assert.equal(noFlag.code, 2);
    const notBilled = await admin(['agency', 'add-owner', '--user', user.email, '--workspace', ws.workspace.id]);
    assert.equal(notBilled.code, 1);
    assert.match(notBilled.stderr, /not billed to an agency/);
    const agency = await createWorkspace({ name: 'Other Agency', plan: 'BUSINESS' });
    const member2 = await member(agency.id, 'Member');
    const notAdmin = await admin(['agency', 'add-owner', '--user', member2.email, '--workspace', ws.workspace.id, '--agency', agency.id]);
    assert.equal(notAdmin.code, 1);
    assert.match(notAdmin.stderr, /agency owners are Admins/);
  });
});
