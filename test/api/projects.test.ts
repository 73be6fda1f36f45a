import assert from 'node:assert/strict';
import { createProject, linkCompanyPage, type ConnectionPreset } from '../../admin/provision';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { client, type CallResult, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';

// spec 2.5 / 2.6: the project row and its stored connection block. Reading never probes the
// network, so every preset is checked from stored health alone.

const PROJECT_FIELDS = ['avatarUrl', 'createdAt', 'id', 'isActive', 'name', 'network', 'status', 'type', 'typeLabel', 'username'];
const NETWORK_FIELDS = ['accessTokenExpiresAt', 'canPublish', 'connectionStatus', 'detail', 'lastValidatedAt', 'reconnectUrl', 'state'];

describe('projects (spec 2.5, 2.6, 4.3)', () => {
  const api = useApi();

  const expectations: Array<{
    preset: Exclude<ConnectionPreset, 'none'>;
    state: string;
    canPublish: boolean;
    connectionStatus: string;
    validated: boolean;
    expires: boolean;
  }> = [
    { preset: 'connected', state: 'connected', canPublish: true, connectionStatus: 'CONNECTED', validated: true, expires: true },
    { preset: 'expiring_soon', state: 'expiring_soon', canPublish: true, connectionStatus: 'CONNECTED', validated: true, expires: true },
    { preset: 'degraded', state: 'degraded', canPublish: true, connectionStatus: 'DEGRADED', validated: true, expires: true },
    // spec 2.6: an account holding no token still reads CONNECTED in the raw cache.
    { preset: 'disconnected', state: 'disconnected', canPublish: false, connectionStatus: 'CONNECTED', validated: false, expires: false },
    { preset: 'revoked', state: 'revoked', canPublish: false, connectionStatus: 'REVOKED', validated: true, expires: true },
  ];

  for (const e of expectations) {
    it(`derives the network block of a ${e.preset} personal project`, async () => {
      const { key, workspace } = await workspaceWithKey({ projects: 0 });
      const project = await createProject({
        workspaceId: workspace.id,
        type: 'PERSONAL_BRAND',
        name: `Ann ${e.preset}`,
        username: 'ann',
        connection: e.preset,
      });
      const res = await client(api.url, key)('GET', `/v1/projects/${project.id}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const p = res.body.data;
      assert.deepEqual(Object.keys(p).sort(), PROJECT_FIELDS, 'no URL field, nothing extra');
      assert.deepEqual(Object.keys(p.network).sort(), NETWORK_FIELDS);
      const n = p.network;
      assert.equal(n.state, e.state);
      assert.equal(n.canPublish, e.canPublish);
      assert.equal(n.connectionStatus, e.connectionStatus);
      assert.equal(n.lastValidatedAt === null, !e.validated);
      assert.equal(n.accessTokenExpiresAt === null, !e.expires);
      if (e.state === 'connected') {
        assert.equal(n.detail, null);
        assert.equal(n.reconnectUrl, null);
      } else {
        assert.equal(typeof n.detail, 'string');
        assert.ok(n.detail.length > 0);
        assert.equal(n.reconnectUrl, `${config.dashboardUrl}/workspaces/${workspace.id}/projects/${project.id}/connection`);
      }
      assert.equal(p.type, 'PERSONAL_BRAND');
      assert.equal(p.typeLabel, 'Network Account');
      assert.equal(p.name, `Ann ${e.preset}`);
      assert.equal(p.username, 'ann');
      assert.equal(p.status, 'ACTIVE');
      assert.equal(p.isActive, true);
    });
  }

  it('gives a never-linked company page a null network block', async () => {
    const { key, workspace } = await workspaceWithKey({ projects: 0 });
    const page = await createProject({ workspaceId: workspace.id, type: 'COMPANY_PAGE', name: 'Acme Inc', connection: 'none' });
    const res = await client(api.url, key)('GET', `/v1/projects/${page.id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.network, null);
    assert.equal(res.body.data.typeLabel, 'Company Page');
    assert.equal(res.body.data.name, 'Acme Inc');
  });

  it('shows a linked company page the block of the personal account it publishes through', async () => {
    const { key, workspace } = await workspaceWithKey({ projects: 0 });
    const admin = await createProject({
      workspaceId: workspace.id,
      type: 'PERSONAL_BRAND',
      name: 'Page Admin',
      connection: 'expiring_soon',
    });
    const page = await createProject({ workspaceId: workspace.id, type: 'COMPANY_PAGE', name: 'Linked Co', linkedProjectId: admin.id });
    const call = client(api.url, key);
    const own = (await call('GET', `/v1/projects/${admin.id}`)).body.data.network;
    const linked = (await call('GET', `/v1/projects/${page.id}`)).body.data;
    assert.equal(linked.name, 'Linked Co', 'a company page keeps its company name');
    assert.ok(linked.network, 'linked page has a block');
    for (const k of ['state', 'canPublish', 'connectionStatus', 'lastValidatedAt', 'accessTokenExpiresAt', 'detail']) {
      assert.deepEqual(linked.network[k], own[k], k);
    }
    assert.equal(linked.network.state, 'expiring_soon');
    assert.equal(typeof linked.network.reconnectUrl, 'string');

    // Linking a page after the fact switches it from null to the account's block.
    const later = await createProject({ workspaceId: workspace.id, type: 'COMPANY_PAGE', name: 'Later Co', connection: 'none' });
    assert.equal((await call('GET', `/v1/projects/${later.id}`)).body.data.network, null);
    await linkCompanyPage(workspace.id, later.id, admin.id);
    assert.equal((await call('GET', `/v1/projects/${later.id}`)).body.data.network.state, 'expiring_soon');
  });

  it('labels each project type', async () => {
    const { key, workspace } = await workspaceWithKey({ projects: 0 });
    const amp = await createProject({ workspaceId: workspace.id, type: 'AMPLIFIER', name: 'Amp' });
    const res = await client(api.url, key)('GET', `/v1/projects/${amp.id}`);
    assert.equal(res.body.data.type, 'AMPLIFIER');
    assert.equal(res.body.data.typeLabel, 'Amplifier Account');
  });

  it('lists projects newest first and pages through them with cursors', async () => {
    const { key, workspace } = await workspaceWithKey({ projects: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const type = i % 3 === 0 ? 'COMPANY_PAGE' : 'PERSONAL_BRAND';
      ids.push(
        (
          await createProject({
            workspaceId: workspace.id,
            type,
            name: `P${i}`,
            connection: type === 'COMPANY_PAGE' ? 'none' : 'connected',
          })
        ).id,
      );
    }
    // Two projects share a creation instant, to exercise the id tie-break.
    await db()('projects')
      .whereIn('id', [ids[2], ids[3]])
      .update({ created_at: new Date('2026-05-01T00:00:00.000Z') });
    const expected: string[] = await db()('projects')
      .where({ workspace_id: workspace.id })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .pluck('id');

    const call = client(api.url, key);
    const all = await call('GET', '/v1/projects');
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.data.map((p: { id: string }) => p.id),
      expected,
    );
    assert.deepEqual(all.body.pagination, { next_cursor: null, has_more: false });

    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res: CallResult = await call('GET', `/v1/projects?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      seen.push(...res.body.data.map((p: { id: string }) => p.id));
      cursor = res.body.pagination.next_cursor;
      if (!res.body.pagination.has_more) break;
    }
    assert.deepEqual(seen, expected);
    assert.equal(cursor, null);

    const pages = await call('GET', '/v1/projects?type=COMPANY_PAGE&limit=1');
    assert.equal(pages.body.data[0].type, 'COMPANY_PAGE');
    assert.equal(pages.body.pagination.has_more, true);
    assertError(
      await call('GET', `/v1/projects?limit=1&cursor=${encodeURIComponent(pages.body.pagination.next_cursor)}`),
      400,
      'bad_cursor',
    );
    assertError(await call('GET', '/v1/projects?limit=0'), 400, 'bad_pagination');
    assertError(await call('GET', '/v1/projects?type=PAGE'), 400, 'invalid_request');
  });

  it('answers an unknown project id with 404 not_found', async () => {
    const { key } = await workspaceWithKey();
    assertError(await client(api.url, key)('GET', `/v1/projects/proj_${'0'.repeat(24)}`), 404, 'not_found');
  });
});
