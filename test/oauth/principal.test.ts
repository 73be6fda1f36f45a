import assert from 'node:assert/strict';
import { clearReachCache } from '../../api/oauth/reach';
import {
  addMember,
  createProject,
  createWorkspace,
  listUserGrants,
  makeAgencyOwner,
  removeAgencyOwner,
  revokeUserGrants,
  setWorkspacePlan,
} from '../../admin/provision';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { READ_SCOPES } from '../../lib/scopes';
import { client } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { apiGet, register, useOAuthApi, tokenFor } from './support';

// OAuth tokens as API principals: spec 2.3, 4.2, 5.2, 5.4, 5.5.

describe('OAuth principals in the REST API', () => {
  const api = useOAuthApi();
  let clientId: string;
  const redirectUri = 'https://client.example.com/cb';
  before(async () => {
    clientId = (await register(api.url, { client_name: 'Principal Client', redirect_uris: [redirectUri] })).body.client_id;
  });

  const token = async (email: string, opts: { scope?: string; access?: 'read' | 'full'; workspace?: string; project?: string } = {}) =>
    (
      await tokenFor(api.url, {
        clientId,
        redirectUri,
        email,
        scope: opts.scope ?? 'read write',
        access: opts.access ?? 'full',
        workspace: opts.workspace,
        project: opts.project,
      })
    ).access_token;

  function expectError(res: { status: number; body: any }, status: number, code: string) {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.error.code, code);
  }

  describe('the oauth_token principal (spec 2.3)', () => {
    it('GET /v1/workspaces/me and /context show it, with the pinned default project by its display name', async () => {
      const ws = await workspaceWithKey({ projects: 2 });
      const user = await member(ws.workspace.id, 'Admin');
      const pinned = ws.projects[0]!;
      const access = await token(user.email, { workspace: ws.workspace.id, project: pinned.id });
      const me = await apiGet(api.url, '/v1/workspaces/me', access);
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.data.workspace.id, ws.workspace.id);
      const p = me.body.data.principal;
      assert.equal(p.type, 'oauth_token');
      assert.match(p.id, /^oat_/);
      assert.equal(p.clientId, clientId);
      assert.equal(p.actingUserId, user.id);
      assert.ok(p.scopes.includes('posts:write') && p.scopes.includes('workspace:read'));
      const listed = (await apiGet(api.url, '/v1/projects', access)).body.data.find((x: { id: string }) => x.id === pinned.id);
      assert.deepEqual(p.defaultProject, { id: pinned.id, name: listed.name });
      const context = await apiGet(api.url, '/v1/workspaces/context', access);
      assert.equal(context.status, 200);
      assert.deepEqual(context.body.data.principal, p);
    });

    it('defaultProject is null when none was pinned, and when the pinned project is gone', async () => {
      const ws = await workspaceWithKey({ projects: 2 });
      const user = await member(ws.workspace.id, 'Admin');
      const unpinned = await token(user.email, { workspace: ws.workspace.id, project: '' });
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', unpinned)).body.data.principal.defaultProject, null);
      const pinned = await token(user.email, { scope: 'read', workspace: ws.workspace.id, project: ws.projects[1]!.id });
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', pinned)).body.data.principal.defaultProject.id, ws.projects[1]!.id);
      await db()('projects').where({ id: ws.projects[1]!.id }).delete();
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', pinned)).body.data.principal.defaultProject, null);
    });

    it('applies the scope rules of spec 5.2 to the granted list', async () => {
      const ws = await workspaceWithKey();
      const user = await member(ws.workspace.id, 'Admin');
      const readOnly = await token(user.email, { access: 'read' });
      expectError(
        await client(api.url, readOnly)('POST', '/v1/posts', { body: { projectId: ws.project.id, content: 'x' } }),
        403,
        'scope_missing',
      );
      const writer = await token(user.email, { scope: 'posts:write' });
      // posts:write satisfies posts:read (rule 2); nothing else was granted.
      assert.equal((await apiGet(api.url, `/v1/posts?projectId=${ws.project.id}`, writer)).status, 200);
      expectError(await apiGet(api.url, '/v1/team', writer), 403, 'scope_missing');
      assert.equal((await client(api.url, writer)('POST', '/v1/posts', { body: { projectId: ws.project.id, content: 'hi' } })).status, 200);
    });

    it('keeps the scope list granted at consent; an alias is never expanded again later', async () => {
      const ws = await workspaceWithKey();
      const user = await member(ws.workspace.id, 'Admin');
      const access = await token(user.email, { scope: 'read', access: 'read' });
      const stored = await db()('oauth_grants').where({ user_id: user.id }).first();
      assert.deepEqual(stored.scopes, [...READ_SCOPES]);
      assert.ok(!stored.scopes.includes('read'), 'no alias is stored');
      // A scope that did not exist at consent: simulate a consent made before media:read existed.
      await db()('oauth_access_tokens')
        .where({ user_id: user.id })
        .update({ scopes: stored.scopes.filter((s: string) => s !== 'media:read') });
      const { clearAccessTokenCache } = await import('../../api/oauth/tokens');
      clearAccessTokenCache();
      const me = await apiGet(api.url, '/v1/workspaces/me', access);
      assert.ok(!me.body.data.principal.scopes.includes('media:read'));
    });

    it('answers unknown and revoked tokens with 401 invalid_token and a resource-metadata challenge', async () => {
      const res = await apiGet(api.url, '/v1/workspaces/me', `svc_oat_${'x'.repeat(43)}`);
      expectError(res, 401, 'invalid_token');
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata=".*\/\.well-known\/oauth-protected-resource"/);
    });
  });

  describe('workspace targeting and reach (spec 4.2, 5.5)', () => {
    it('defaults to the pinned workspace; Service-Workspace-Id reaches other memberships; anything else is workspace_unavailable', async () => {
      const a = await workspaceWithKey({ projects: 1, name: 'Alpha' });
      const b = await workspaceWithKey({ projects: 3, name: 'Beta' });
      const stranger = await workspaceWithKey({ name: 'Gamma' });
      const user = await member(a.workspace.id, 'Admin');
      await addMember({ workspaceId: b.workspace.id, user: user.id, role: 'Member', projectIds: [b.projects[2]!.id] });
      const access = await token(user.email, { workspace: a.workspace.id });

      assert.equal((await apiGet(api.url, '/v1/workspaces/me', access)).body.data.workspace.id, a.workspace.id);
      const inB = await apiGet(api.url, '/v1/workspaces/me', access, { 'Service-Workspace-Id': b.workspace.id });
      assert.equal(inB.status, 200);
      assert.equal(inB.body.data.workspace.id, b.workspace.id);
      assert.equal(inB.body.data.principal.defaultProject, null, 'the default project does not cross workspaces');
      // A plain member sees only assigned projects.
      const projects = await apiGet(api.url, '/v1/projects', access, { 'Service-Workspace-Id': b.workspace.id });
      assert.deepEqual(
        projects.body.data.map((p: { id: string }) => p.id),
        [b.projects[2]!.id],
      );

      const foreign = await apiGet(api.url, '/v1/workspaces/me', access, { 'Service-Workspace-Id': stranger.workspace.id });
      const missing = await apiGet(api.url, '/v1/workspaces/me', access, { 'Service-Workspace-Id': 'org_doesnotexist000000000000' });
      expectError(foreign, 403, 'workspace_unavailable');
      expectError(missing, 403, 'workspace_unavailable');
      assert.equal(foreign.body.error.message, missing.body.error.message, 'identical answers');
      assert.deepEqual(Object.keys(foreign.body.error).sort(), Object.keys(missing.body.error).sort());

      const list = await apiGet(api.url, '/v1/workspaces', access);
      assert.equal(list.status, 200);
      const entries = list.body.data.map((w: any) => ({ id: w.id, reach: w.reach, isDefault: w.isDefault }));
      assert.deepEqual(
        entries.sort((x: any, y: any) => x.id.localeCompare(y.id)),
        [
          { id: a.workspace.id, reach: 'member', isDefault: true },
          { id: b.workspace.id, reach: 'member', isDefault: false },
        ].sort((x, y) => x.id.localeCompare(y.id)),
      );
    });

    it('membership is read live, cached at most membershipCacheMs', async () => {
      assert.ok(config.membershipCacheMs <= 60_000);
      const a = await workspaceWithKey();
      const b = await workspaceWithKey();
      const user = await member(a.workspace.id, 'Admin');
      await addMember({ workspaceId: b.workspace.id, user: user.id, role: 'Admin' });
      const access = await token(user.email, { workspace: a.workspace.id });
      assert.equal((await apiGet(api.url, '/v1/projects', access, { 'Service-Workspace-Id': b.workspace.id })).status, 200);
      await db()('memberships').where({ workspace_id: b.workspace.id, user_id: user.id }).delete();
      clearReachCache(); // stands in for the cache lifetime passing
      expectError(await apiGet(api.url, '/v1/projects', access, { 'Service-Workspace-Id': b.workspace.id }), 403, 'workspace_unavailable');
      // Leaving the pinned workspace ends the token's use there too.
      await db()('memberships').where({ workspace_id: a.workspace.id, user_id: user.id }).delete();
      clearReachCache();
      expectError(await apiGet(api.url, '/v1/workspaces/me', access), 403, 'workspace_unavailable');
    });

    it('agency owners reach client workspaces as admins, gated by the agency plan', async () => {
      const agency = await createWorkspace({ name: 'Agency Co', plan: 'BUSINESS' });
      const clientWs = await createWorkspace({ name: 'Client Co', plan: 'FREE', billingWorkspaceId: agency.id });
      await createProject({ workspaceId: clientWs.id, type: 'PERSONAL_BRAND', name: 'Client Person' });
      await createProject({ workspaceId: clientWs.id, type: 'PERSONAL_BRAND', name: 'Client Second' });
      const user = await member(agency.id, 'Admin');
      // A member of the agency who is not an owner reaches nothing further.
      const bystander = await member(agency.id, 'Admin');
      await makeAgencyOwner({ user: user.email, clientWorkspaceId: clientWs.id });

      const access = await token(user.email, { workspace: agency.id });
      const list = await apiGet(api.url, '/v1/workspaces', access);
      const entry = list.body.data.find((w: { id: string }) => w.id === clientWs.id);
      assert.deepEqual(
        { reach: entry.reach, isDefault: entry.isDefault, name: entry.name },
        { reach: 'agency_owner', isDefault: false, name: 'Client Co' },
      );

      const h = { 'Service-Workspace-Id': clientWs.id };
      const me = await apiGet(api.url, '/v1/workspaces/me', access, h);
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.data.workspace.plan, 'BUSINESS', "the agency's plan");
      assert.equal((await apiGet(api.url, '/v1/projects', access, h)).body.data.length, 2, 'admin: every project');
      assert.equal((await apiGet(api.url, '/v1/team', access, h)).status, 200);

      const other = await token(bystander.email, { workspace: agency.id });
      expectError(await apiGet(api.url, '/v1/workspaces/me', other, h), 403, 'workspace_unavailable');

      await removeAgencyOwner({ user: user.email, agencyWorkspaceId: agency.id });
      expectError(await apiGet(api.url, '/v1/workspaces/me', access, h), 403, 'workspace_unavailable');
    });

    it('the consent page offers agency client workspaces, and a token can be pinned there', async () => {
      const agency = await createWorkspace({ name: 'Pin Agency', plan: 'BUSINESS' });
      const clientWs = await createWorkspace({ name: 'Pinned Client', plan: 'STARTER' });
      const user = await member(agency.id, 'Admin');
      const owned = await makeAgencyOwner({ user: user.id, clientWorkspaceId: clientWs.id, agencyWorkspaceId: agency.id });
      assert.deepEqual(
        owned.clientWorkspaces.map((w) => w.id),
        [clientWs.id],
      );
      const access = await token(user.email, { workspace: clientWs.id });
      const me = await apiGet(api.url, '/v1/workspaces/me', access);
      assert.equal(me.body.data.workspace.id, clientWs.id);
      assert.equal(me.body.data.workspace.plan, 'BUSINESS');
    });

    it("plan gating follows the default workspace's plan (spec 5.5), not the targeted one's", async () => {
      const a = await workspaceWithKey();
      const free = await createWorkspace({ name: 'Free Co', plan: 'FREE' });
      await createProject({ workspaceId: free.id, type: 'PERSONAL_BRAND', name: 'Free Person' });
      const user = await member(a.workspace.id, 'Admin');
      await addMember({ workspaceId: free.id, user: user.id, role: 'Admin' });
      const access = await token(user.email, { workspace: a.workspace.id });
      // Pinned to a BUSINESS workspace: served in a member workspace whose own plan has no API access.
      const me = await apiGet(api.url, '/v1/workspaces/me', access, { 'Service-Workspace-Id': free.id });
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.data.workspace.id, free.id);
      assert.equal(me.body.data.workspace.plan, 'FREE', 'the workspace still shows its own plan');
      assert.equal((await apiGet(api.url, '/v1/projects', access, { 'Service-Workspace-Id': free.id })).body.data.length, 1);
      // A default workspace whose plan lacks API access refuses everywhere, the API workspace included.
      await setWorkspacePlan(a.workspace.id, 'FREE');
      clearReachCache(); // stands in for AUTH_CACHE_MS passing
      expectError(await apiGet(api.url, '/v1/workspaces/me', access), 403, 'plan_not_eligible');
      expectError(await apiGet(api.url, '/v1/workspaces/me', access, { 'Service-Workspace-Id': free.id }), 403, 'plan_not_eligible');
    });

    it("an agency-paid default workspace carries the agency's plan into a member workspace without API access", async () => {
      const agency = await createWorkspace({ name: 'Paying Agency', plan: 'BUSINESS' });
      const paid = await createWorkspace({ name: 'Paid Client', plan: 'FREE', billingWorkspaceId: agency.id });
      const starter = await createWorkspace({ name: 'Starter Co', plan: 'STARTER' });
      const user = await member(paid.id, 'Admin');
      await addMember({ workspaceId: starter.id, user: user.id, role: 'Admin' });
      const access = await token(user.email, { workspace: paid.id });
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', access)).status, 200);
      const there = await apiGet(api.url, '/v1/workspaces/me', access, { 'Service-Workspace-Id': starter.id });
      assert.equal(there.status, 200, JSON.stringify(there.body));
      assert.equal(there.body.data.workspace.id, starter.id);
    });
  });

  describe('GET /v1/team for a plain member (spec 5.5)', () => {
    it('shows a plain Member only the project references of projects assigned to it; admins see all', async () => {
      const ws = await workspaceWithKey({ projects: 3 });
      const [mine, theirs, third] = ws.projects.map((p) => p.id) as [string, string, string];
      const plain = await member(ws.workspace.id, 'Member', [mine]);
      const colleague = await member(ws.workspace.id, 'Member', [mine, theirs, third]);
      const access = await token(plain.email, { workspace: ws.workspace.id });
      const team = await apiGet(api.url, '/v1/team', access);
      assert.equal(team.status, 200, JSON.stringify(team.body));
      const refs = (userId: string, body: any) =>
        body.data.members
          .find((m: { userId: string }) => m.userId === userId)
          .projects.map((p: { id: string }) => p.id)
          .sort();
      assert.deepEqual(refs(colleague.id, team.body), [mine], "the colleague's other projects are not shown");
      assert.deepEqual(refs(plain.id, team.body), [mine]);
      assert.equal(team.body.data.members.length, 2, 'every member is still listed');
      // An admin credential (the API key) sees every assignment.
      const full = await client(api.url, ws.key)('GET', '/v1/team');
      assert.deepEqual(refs(colleague.id, full.body), [mine, theirs, third].sort());
    });
  });

  describe('client-role accounts (spec 5.4)', () => {
    async function clientSetup() {
      const ws = await workspaceWithKey({ projects: 1 });
      const user = await member(ws.workspace.id, 'Client', [ws.project.id]);
      const api_ = client(api.url, ws.key);
      const ids: Record<string, string> = {};
      for (const status of ['draft', 'waitingApproval', 'scheduled', 'published', 'suggested']) {
        const created = await api_('POST', '/v1/posts', { body: { projectId: ws.project.id, content: `a ${status} post` } });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        await db()('posts').where({ id: created.body.data.id }).update({ status });
        ids[status] = created.body.data.id;
      }
      return { ...ws, user, ids };
    }

    it('refuses denied operations with 403 forbidden_project, reason client_role, whatever the scopes', async () => {
      const s = await clientSetup();
      const access = await token(s.user.email, { scope: 'read write', access: 'full' });
      const team = await apiGet(api.url, '/v1/team', access);
      expectError(team, 403, 'forbidden_project');
      assert.equal(team.body.error.details.reason, 'client_role');
      const create = await client(api.url, access)('POST', '/v1/posts', { body: { projectId: s.project.id, content: 'nope' } });
      expectError(create, 403, 'forbidden_project');
      assert.equal(create.body.error.details.reason, 'client_role');
      expectError(await apiGet(api.url, `/v1/notes?projectId=${s.project.id}`, access), 403, 'forbidden_project');
      // Workspace and projects read normally.
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', access)).status, 200);
      assert.equal((await apiGet(api.url, '/v1/projects', access)).status, 200);
    });

    it('narrows posts to review, scheduled and published', async () => {
      const s = await clientSetup();
      const access = await token(s.user.email, { scope: 'read', access: 'read' });
      const list = await apiGet(api.url, `/v1/posts?projectId=${s.project.id}`, access);
      assert.equal(list.status, 200, JSON.stringify(list.body));
      assert.deepEqual(list.body.data.map((p: { status: string }) => p.status).sort(), ['published', 'scheduled', 'waitingApproval']);
      expectError(await apiGet(api.url, `/v1/posts/${s.ids.draft}`, access), 404, 'not_found');
      assert.equal((await apiGet(api.url, `/v1/posts/${s.ids.published}`, access)).status, 200);
      // API keys are unaffected.
      assert.equal((await client(api.url, s.key)('GET', `/v1/posts?projectId=${s.project.id}`)).body.data.length, 5);
    });

    it('reads the role live: a change applies once the membership cache turns over', async () => {
      const s = await clientSetup();
      const access = await token(s.user.email, { scope: 'read', access: 'read' });
      expectError(await apiGet(api.url, '/v1/team', access), 403, 'forbidden_project');
      await db()('memberships').where({ workspace_id: s.workspace.id, user_id: s.user.id }).update({ role: 'admin' });
      clearReachCache(); // stands in for config.membershipCacheMs passing
      assert.equal((await apiGet(api.url, '/v1/team', access)).status, 200);
      assert.equal((await apiGet(api.url, `/v1/posts?projectId=${s.project.id}`, access)).body.data.length, 5);
    });
  });

  describe('operator actions', () => {
    it("lists a user's grants and revoking one kills its tokens at once", async () => {
      const ws = await workspaceWithKey();
      const user = await member(ws.workspace.id, 'Admin');
      const first = await tokenFor(api.url, { clientId, redirectUri, email: user.email, scope: 'read offline_access', access: 'read' });
      const listed = await listUserGrants(user.email);
      assert.equal(listed.grants.length, 1);
      assert.equal(listed.grants[0]!.clientId, clientId);
      assert.equal(listed.grants[0]!.status, 'active');
      assert.equal(listed.grants[0]!.activeAccessTokens, 1);
      const revoked = await revokeUserGrants({ user: user.email, grantId: listed.grants[0]!.id });
      assert.deepEqual(revoked.revoked, [listed.grants[0]!.id]);
      assert.equal((await apiGet(api.url, '/v1/workspaces/me', first.access_token)).status, 401);
      const res = await fetch(`${api.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: first.refresh_token! }),
      });
      assert.equal(res.status, 400);
      assert.equal((await listUserGrants(user.id)).grants[0]!.status, 'revoked');
    });
  });
});
