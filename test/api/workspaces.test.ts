import assert from 'node:assert/strict';
import { newId } from '../../lib/ids';
import { localWeekStart } from '../../lib/streaks';
import { createProject, createWorkspace, issueApiKey } from '../../admin/provision';
import { db } from '../../lib/db';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError, insertMembers } from '../support/foundation';

// spec 2.2-2.4, 2.15, 4.2, 8: the workspace views an API key gets, with their bounds
// (25 context projects, 100 roster members, 25 distinct project references).

describe('workspaces and team (spec 2.2-2.4, 2.15, 4.2)', function () {
  this.timeout(30_000);
  const api = useApi();

  it('/v1/workspaces/me returns the workspace, the api_key principal and the features', async () => {
    const { key, keyId, workspace } = await workspaceWithKey({ scopes: ['posts:read', 'workspace:read'] });
    const res = await client(api.url, key)('GET', '/v1/workspaces/me');
    assert.equal(res.status, 200);
    const { data } = res.body;
    assert.deepEqual(Object.keys(data.workspace).sort(), ['features', 'id', 'name', 'plan']);
    assert.equal(data.workspace.id, workspace.id);
    assert.match(data.workspace.id, /^org_/);
    assert.equal(data.workspace.name, workspace.name);
    assert.equal(data.workspace.plan, 'BUSINESS');
    for (const v of Object.values(data.workspace.features)) assert.equal(typeof v, 'boolean');
    assert.equal(data.workspace.features.api, true);
    assert.deepEqual(data.principal, { type: 'api_key', id: keyId, scopes: ['workspace:read', 'posts:read'] });
    assert.match(data.principal.id, /^key_/);
    assert.deepEqual(data.features, data.workspace.features);
  });

  it('/v1/workspaces lists the one workspace bound to a key', async () => {
    const { key, workspace } = await workspaceWithKey();
    const res = await client(api.url, key)('GET', '/v1/workspaces');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, [{ id: workspace.id, name: workspace.name, isDefault: true, reach: 'member' }]);
    assert.deepEqual(res.body.pagination, { next_cursor: null, has_more: false });
  });

  it('/v1/workspaces/context mirrors /me and lists projects with their streak', async () => {
    const ws = await createWorkspace({ name: 'Gatekept', plan: 'BUSINESS', requireReviewWorkflow: true });
    const personal = await createProject({ workspaceId: ws.id, type: 'PERSONAL_BRAND', name: 'Streaky' });
    // spec 2.4 from real publish history (lib/streaks.ts): 9 consecutive weeks long ago, then the
    // 4 weeks up to this one (UTC project: weeks start Monday 00:00 UTC).
    const monday = Date.parse(`${localWeekStart(new Date(), 'UTC')}T00:00:00Z`);
    const weekAt = (k: number) => new Date(monday - k * 7 * 86_400_000 + 3_600_000);
    const history = [0, 1, 2, 3, 20, 21, 22, 23, 24, 25, 26, 27, 28].map((k) => ({
      id: newId('post'),
      workspace_id: ws.id,
      project_id: personal.id,
      status: 'published',
      title: '',
      content: 'x',
      content_type: 'PERSONAL',
      published_at: weekAt(k),
    }));
    await db()('posts').insert(history);
    const page = await createProject({ workspaceId: ws.id, type: 'COMPANY_PAGE', name: 'Page', connection: 'none' });
    const fresh = await createProject({ workspaceId: ws.id, type: 'AMPLIFIER', name: 'No streak yet' });
    await db()('projects').where({ id: fresh.id }).update({ current_streak: null, longest_streak: null });
    const { key } = await issueApiKey({ workspaceId: ws.id, scopes: ['workspace:read'] });
    const call = client(api.url, key);
    const me = (await call('GET', '/v1/workspaces/me')).body.data;
    const res = await call('GET', '/v1/workspaces/context');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const ctx = res.body.data;
    assert.deepEqual(ctx.workspace, me.workspace);
    assert.deepEqual(ctx.principal, me.principal);
    assert.equal(ctx.requireReviewWorkflow, true);
    assert.equal(ctx.projectsTruncated, false);
    assert.equal(ctx.projects.length, 3);
    const byId = Object.fromEntries(ctx.projects.map((p: { id: string }) => [p.id, p]));
    assert.deepEqual(byId[personal.id].streak, { currentStreak: 4, longestStreak: 9 });
    assert.equal(byId[page.id].streak, null, 'company pages have no streak');
    assert.equal(byId[fresh.id].streak, null, 'no streak recorded yet');
    // Each entry is a project-list row plus streak.
    const listed = (await call('GET', '/v1/projects')).body.data;
    for (const row of listed) assert.deepEqual({ ...byId[row.id], streak: undefined }, { ...row, streak: undefined });
  });

  it('caps /v1/workspaces/context at 25 projects and says so', async () => {
    const ws = await createWorkspace({ name: 'Many', plan: 'ADVANCED' });
    for (let i = 0; i < 26; i++) await createProject({ workspaceId: ws.id, type: 'PERSONAL_BRAND', name: `P${i}` });
    const { key } = await issueApiKey({ workspaceId: ws.id, scopes: ['read'] });
    const res = await client(api.url, key)('GET', '/v1/workspaces/context');
    assert.equal(res.status, 200);
    assert.equal(res.body.data.projects.length, 25);
    assert.equal(res.body.data.projectsTruncated, true);
    assert.equal(res.body.data.requireReviewWorkflow, false);
    const newest: string[] = await db()('projects')
      .where({ workspace_id: ws.id })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(25)
      .pluck('id');
    assert.deepEqual(
      res.body.data.projects.map((p: { id: string }) => p.id),
      newest,
    );

    // Exactly 25 is not truncated.
    const oldest = await db()('projects').where({ workspace_id: ws.id }).orderBy('created_at', 'asc').first('id');
    await db()('projects').where({ id: oldest.id }).delete();
    const again = await client(api.url, key)('GET', '/v1/workspaces/context');
    assert.equal(again.body.data.projects.length, 25);
    assert.equal(again.body.data.projectsTruncated, false);
  });

  it('/v1/team folds legacy role slugs into labels and keeps role as stored', async () => {
    const { key, workspace } = await workspaceWithKey();
    // spec 2.15 in its own words: the legacy team-manager and content-assistant slugs fold into
    // Admin, personal-brand team insights into Member; the personal-brand slug is Member's.
    const folds = {
      Admin: ['admin', 'team_manager', 'content_assistant'],
      Member: ['personal_brand', 'personal_brand_team_insights'],
      Client: ['client'],
    };
    const roles = Object.values(folds).flat();
    const base = Date.parse('2026-01-01T00:00:00Z');
    const members = await insertMembers(workspace.id, roles, (i) => new Date(base + i * 1000));
    const res = await client(api.url, key)('GET', '/v1/team');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { data } = res.body;
    assert.equal(data.totalCount, 6);
    assert.equal(data.truncated, false);
    assert.equal(data.projectsTruncated, false);
    const labels = Object.fromEntries(data.members.map((m: { role: string; roleLabel: string }) => [m.role, m.roleLabel]));
    assert.deepEqual(labels, Object.fromEntries(Object.entries(folds).flatMap(([label, slugs]) => slugs.map((slug) => [slug, label]))));
    assert.deepEqual(
      data.members.map((m: { userId: string }) => m.userId),
      members.map((m) => m.userId),
      'ordered by join date',
    );
    assert.ok(data.members.every((m: { projects: unknown[] }) => Array.isArray(m.projects)));
  });

  it('/v1/team returns one page of 100 members with truncated and totalCount', async () => {
    const { key, workspace } = await workspaceWithKey();
    await insertMembers(
      workspace.id,
      Array.from({ length: 105 }, () => 'personal_brand'),
    );
    const res = await client(api.url, key)('GET', '/v1/team');
    assert.equal(res.status, 200);
    assert.equal(res.body.data.members.length, 100);
    assert.equal(res.body.data.truncated, true);
    assert.equal(res.body.data.totalCount, 105);
  });

  it('/v1/team caps project references at 25 distinct projects', async () => {
    const { key, workspace } = await workspaceWithKey({ projects: 0 });
    const projectIds: string[] = [];
    for (let i = 0; i < 26; i++)
      projectIds.push((await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: `T${i}` })).id);
    const [a, b] = await insertMembers(workspace.id, ['personal_brand', 'personal_brand']);
    // Two members share part of the set: references are counted by distinct project.
    await db()('membership_projects').insert([
      ...projectIds.slice(0, 20).map((p) => ({ membership_id: a!.membershipId, project_id: p })),
      ...projectIds.slice(10, 25).map((p) => ({ membership_id: b!.membershipId, project_id: p })),
    ]);
    const call = client(api.url, key);
    const within = await call('GET', '/v1/team');
    assert.equal(within.body.data.projectsTruncated, false, '25 distinct projects fit');
    const refs = (m: { projects: Array<{ id: string; name: string }> }) => m.projects.map((p) => p.id);
    assert.equal(new Set(within.body.data.members.flatMap(refs)).size, 25);

    await db()('membership_projects').insert({ membership_id: b!.membershipId, project_id: projectIds[25] });
    const over = await call('GET', '/v1/team');
    assert.equal(over.body.data.projectsTruncated, true);
    const distinct = new Set<string>(over.body.data.members.flatMap(refs));
    assert.equal(distinct.size, 25);
    for (const m of over.body.data.members) for (const p of m.projects) assert.equal(typeof p.name, 'string');
  });

  it('/v1/team and /context never show another workspace', async () => {
    const a = await workspaceWithKey();
    const b = await workspaceWithKey();
    await insertMembers(b.workspace.id, ['admin']);
    const team = await client(api.url, a.key)('GET', '/v1/team');
    assert.equal(team.body.data.totalCount, 0);
    assert.deepEqual(team.body.data.members, []);
    const ctx = await client(api.url, a.key)('GET', '/v1/workspaces/context');
    assert.deepEqual(
      ctx.body.data.projects.map((p: { id: string }) => p.id),
      [a.project.id],
    );
  });

  it('refuses /v1/workspaces/me for a workspace without API access', async () => {
    const { key } = await workspaceWithKey({ plan: 'STARTER' });
    assertError(await client(api.url, key)('GET', '/v1/workspaces/me'), 403, 'plan_not_eligible');
  });
});
