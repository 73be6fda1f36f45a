import type { Knex } from 'knex';
import { db } from '../../lib/db';

// Who is calling and what they may touch. Built once per request by `authenticate`.

export type Principal =
  | { type: 'api_key'; id: string; scopes: string[] }
  | { type: 'oauth_token'; id: string; clientId: string; actingUserId: string; scopes: string[]; defaultProjectId: string | null };

export type AccessRole = 'admin' | 'member' | 'client';

export interface AuthContext {
  principal: Principal;
  workspaceId: string;
  /** The plan that decides API access (spec 5.5: an agency-billed workspace carries the agency's plan). */
  gatingPlan: string;
  scopes: ReadonlySet<string>;
  role: AccessRole;
  /** null: every project of the workspace; otherwise the assigned projects (spec 5.5 plain members). */
  projectIds: ReadonlySet<string> | null;
  reach: 'member' | 'agency_owner';
}

/** Habit 5: every read of workspace data starts here, so a foreign id is simply not found. */
export function scoped(auth: Pick<AuthContext, 'workspaceId'>, table: string, trx: Knex | Knex.Transaction = db()): Knex.QueryBuilder {
  return trx(table).where(`${table}.workspace_id`, auth.workspaceId);
}

/** Projects the caller may see: the workspace's, narrowed to assignments for plain members. */
export function visibleProjects(auth: AuthContext, trx: Knex | Knex.Transaction = db()): Knex.QueryBuilder {
  // spec 2.5: the API returns ACTIVE projects; an archived (operator-deleted) one is not found.
  const q = scoped(auth, 'projects', trx).whereNot('projects.status', 'ARCHIVED');
  if (auth.projectIds) q.whereIn('projects.id', [...auth.projectIds]);
  return q;
}

export function canSeeProject(auth: AuthContext, projectId: string): boolean {
  return auth.projectIds === null || auth.projectIds.has(projectId);
}
