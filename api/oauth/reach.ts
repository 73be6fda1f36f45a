import { onLocalInvalidation } from '../../lib/auth/invalidation';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { Project } from '../../lib/models';
import { roleLabel, ROLE_LABELS } from '../../lib/roles';
import type { AccessRole } from '../auth/context';
import { projectName, type ProjectRow } from '../../lib/presenters/projects';

// spec 5.5: which workspaces an OAuth user reaches, and as what.
//
// - `member`: a live organisation membership. Admin-label roles see every project; Member and
//   Client roles see the projects assigned to them (spec 4.2 "a plain member sees only
//   assigned projects"); a Client role additionally gets the client view of spec 5.4.
// - `agency_owner`: the workspace is billed to an agency (workspaces.billing_workspace_id) and
//   the user owns that agency: a row in agency_owners *and* a live Admin-label membership of
//   the agency, so that removing someone from the agency also ends their reach. An agency
//   owner acts as an admin (role admin, every project), whatever a membership of the client
//   workspace itself says.
//
// Reach and role are cached per process for config.membershipCacheMs (spec 5.5: "cached 60
// seconds"; spec 5.4: a role change is effective within a minute). The plan, which decides
// API access, is cached only for config.authCacheMs, like API-key records.

export interface WorkspaceAccess {
  reach: 'member' | 'agency_owner';
  role: AccessRole;
  /** null: every project; otherwise the assigned set. */
  projectIds: ReadonlySet<string> | null;
}

const ADMIN_SLUGS = Object.entries(ROLE_LABELS)
  .filter(([, label]) => label === 'Admin')
  .map(([slug]) => slug);

const accessCache = new Map<string, { value: WorkspaceAccess | null; at: number }>();
const planCache = new Map<string, { plan: string | null; at: number }>();

onLocalInvalidation('reach', () => clearReachCache());

export function clearReachCache(): void {
  accessCache.clear();
  planCache.clear();
}

/** How `userId` reaches each of `workspaceIds` (null: not at all, or no such workspace), in two statements at most. */
async function loadAccess(userId: string, workspaceIds: readonly string[]): Promise<Map<string, WorkspaceAccess | null>> {
  const rows = (await db()('workspaces as w')
    .leftJoin('memberships as m', (j) => j.on('m.workspace_id', 'w.id').andOn('m.user_id', db().raw('?', [userId])))
    .whereIn('w.id', workspaceIds)
    .select(
      'w.id',
      'm.id as membership_id',
      'm.role',
      db().raw(
        `exists (select 1 from agency_owners ao join memberships am on am.workspace_id = ao.agency_workspace_id and am.user_id = ao.user_id
           where ao.agency_workspace_id = w.billing_workspace_id and ao.user_id = ? and am.role = any(?)) as agency_owner`,
        [userId, ADMIN_SLUGS],
      ),
    )) as Array<{ id: string; membership_id: string | null; role: string | null; agency_owner: boolean }>;
  const access = new Map<string, WorkspaceAccess | null>(workspaceIds.map((id) => [id, null]));
  const narrowed: Array<{ id: string; membership_id: string; label: string }> = [];
  for (const row of rows) {
    if (row.agency_owner) access.set(row.id, { reach: row.membership_id ? 'member' : 'agency_owner', role: 'admin', projectIds: null });
    else if (!row.membership_id) continue;
    else if (roleLabel(row.role!) === 'Admin') access.set(row.id, { reach: 'member', role: 'admin', projectIds: null });
    else narrowed.push({ id: row.id, membership_id: row.membership_id, label: roleLabel(row.role!) });
  }
  if (narrowed.length > 0) {
    const assigned = (await db()('membership_projects')
      .whereIn(
        'membership_id',
        narrowed.map((n) => n.membership_id),
      )
      .select('membership_id', 'project_id')) as Array<{ membership_id: string; project_id: string }>;
    for (const n of narrowed)
      access.set(n.id, {
        reach: 'member',
        role: n.label === 'Client' ? 'client' : 'member',
        projectIds: new Set(assigned.filter((a) => a.membership_id === n.membership_id).map((a) => a.project_id)),
      });
  }
  return access;
}

/** How `userId` reaches `workspaceId`, or null when it does not (or the workspace does not exist). */
export async function workspaceAccess(userId: string, workspaceId: string): Promise<WorkspaceAccess | null> {
  return (await workspaceAccesses(userId, [workspaceId])).get(workspaceId)!;
}

/** `workspaceAccess` for each of `workspaceIds`, the ones not cached read together. */
export async function workspaceAccesses(userId: string, workspaceIds: readonly string[]): Promise<Map<string, WorkspaceAccess | null>> {
  const now = Date.now();
  const found = new Map<string, WorkspaceAccess | null>();
  const missing: string[] = [];
  for (const id of workspaceIds) {
    const hit = accessCache.get(`${userId}:${id}`);
    if (hit && now - hit.at < config.membershipCacheMs) found.set(id, hit.value);
    else missing.push(id);
  }
  if (missing.length > 0)
    for (const [id, value] of await loadAccess(userId, missing)) {
      found.set(id, value);
      accessCache.set(`${userId}:${id}`, { value, at: now });
      if (accessCache.size > 100_000) accessCache.delete(accessCache.keys().next().value as string);
    }
  return found;
}

/** spec 5.5: the target workspace's own plan, or its billing agency's plan when it has one. */
export async function effectivePlanOf(workspaceId: string): Promise<string | null> {
  const now = Date.now();
  const hit = planCache.get(workspaceId);
  if (hit && now - hit.at < config.authCacheMs) return hit.plan;
  const row = await db()('workspaces as w')
    .leftJoin('workspaces as b', 'b.id', 'w.billing_workspace_id')
    .where('w.id', workspaceId)
    .first('w.plan', 'b.plan as billing_plan');
  const plan = row ? ((row.billing_plan as string | null) ?? (row.plan as string)) : null;
  planCache.set(workspaceId, { plan, at: now });
  if (planCache.size > 100_000) planCache.delete(planCache.keys().next().value as string);
  return plan;
}

export interface ReachableWorkspace {
  id: string;
  name: string;
  plan: string;
  reach: 'member' | 'agency_owner';
}

/**
 * spec 2.15 / 4.2: every organisation the user belongs to plus the client workspaces billed to
 * an agency the user owns; one entry per workspace, `member` when both apply. Read live: this
 * backs the consent page and GET /v1/workspaces, which are not hot paths.
 */
export async function reachableWorkspaces(userId: string): Promise<ReachableWorkspace[]> {
  const rows = (
    await db().raw(
      `select w.id, w.name, coalesce(b.plan, w.plan) as plan, 'member' as reach
       from memberships m join workspaces w on w.id = m.workspace_id left join workspaces b on b.id = w.billing_workspace_id
      where m.user_id = ?
     union all
     select w.id, w.name, coalesce(b.plan, w.plan) as plan, 'agency_owner' as reach
       from agency_owners ao
       join memberships am on am.workspace_id = ao.agency_workspace_id and am.user_id = ao.user_id and am.role = any(?)
       join workspaces w on w.billing_workspace_id = ao.agency_workspace_id
       left join workspaces b on b.id = w.billing_workspace_id
      where ao.user_id = ?`,
      [userId, ADMIN_SLUGS, userId],
    )
  ).rows as ReachableWorkspace[];
  const byId = new Map<string, ReachableWorkspace>();
  for (const r of rows) {
    const seen = byId.get(r.id);
    if (!seen || (seen.reach === 'agency_owner' && r.reach === 'member')) byId.set(r.id, r);
  }
  return [...byId.values()].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

/** The projects a user may pick as the default on the consent page (spec 5.3.2), newest first. */
export async function pickableProjects(access: WorkspaceAccess, workspaceId: string): Promise<Array<{ id: string; name: string }>> {
  const q = Project.visibleTo({ workspaceId, projectIds: access.projectIds })
    .alias('p')
    .leftJoin('network_connections as c', 'c.id', 'p.connection_id')
    .orderBy([
      { column: 'p.created_at', order: 'desc' },
      { column: 'p.id', order: 'desc' },
    ])
    .select('p.id', 'p.type', 'p.display_name', 'p.slug', 'c.display_name as c_display_name')
    .castTo<Array<Pick<ProjectRow, 'id' | 'type' | 'display_name' | 'slug' | 'c_display_name'>>>();
  const rows = await q;
  // spec 2.5: the display name the project list shows.
  return rows.map((r) => ({ id: r.id, name: projectName(r) }));
}
