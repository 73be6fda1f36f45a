import { config } from '../../../lib/config';
import { errors } from '../../../lib/errors';
import { Workspace } from '../../../lib/models';
import type { AuthContext } from '../../auth/context';
import { page, single } from '../../output';
import {
  workspaceContextSchema,
  workspaceListEntrySchema,
  workspaceMeSchema,
  getCurrentWorkspaceInput,
  listWorkspacesInput,
  getWorkspaceContextInput,
} from './schema';
import { defineOperation } from '../../operation';
import { computeStreaks } from '../../../lib/streaks';
import { presentProject, projectName, type ProjectRow } from '../../../lib/presenters/projects';
import { presentPrincipal, presentWorkspace, type WorkspaceRow } from '../../../lib/presenters/workspaces';
import { findProject, projectQuery } from '../projects/queries';
import { onlyPage } from '../../pagination';

/** Live read (spec 2.2: /workspaces/me is not cacheable and reflects live plan state). */
async function loadWorkspace(workspaceId: string): Promise<WorkspaceRow | undefined> {
  return Workspace.current(workspaceId)
    .alias('w')
    .leftJoin('workspaces as b', 'b.id', 'w.billing_workspace_id')
    .select('w.id', 'w.name', 'w.plan', 'w.feature_overrides', 'w.require_review_workflow', 'b.plan as billing_plan')
    .castTo<WorkspaceRow | undefined>();
}

/** An OAuth token's default project, when the caller can still see it. */
async function defaultProjectOf(auth: AuthContext): Promise<{ id: string; name: string } | null> {
  const p = auth.principal;
  if (p.type !== 'oauth_token' || !p.defaultProjectId) return null;
  const row = await findProject(auth, p.defaultProjectId);
  return row ? { id: row.id, name: projectName(row) } : null;
}

async function workspaceAndPrincipal(auth: AuthContext) {
  const w = await loadWorkspace(auth.workspaceId);
  if (!w) throw errors.workspaceUnavailable();
  const workspace = presentWorkspace(w);
  return { w, workspace, principal: presentPrincipal(auth.principal, await defaultProjectOf(auth)) };
}

export const getCurrentWorkspace = defineOperation({
  name: 'workspaces.me',
  summary: 'The active workspace, the calling principal and the plan features.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  input: getCurrentWorkspaceInput,
  output: single(workspaceMeSchema),
  handler: async ({ auth }) => {
    const { workspace, principal } = await workspaceAndPrincipal(auth);
    return { data: { workspace, principal, features: workspace.features } };
  },
});

/** Listing reach (spec 2.15, 4.2). OAuth principals extend this through `workspaceReach`. */
export type ReachLister = (
  auth: AuthContext,
) => Promise<Array<{ id: string; name: string; reach: 'member' | 'agency_owner'; isDefault: boolean }>>;
let reachLister: ReachLister | null = null;
export function registerReachLister(fn: ReachLister) {
  reachLister = fn;
}

export const listWorkspaces = defineOperation({
  name: 'workspaces.list',
  summary: 'The workspaces this credential can reach.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  input: listWorkspacesInput,
  output: page(workspaceListEntrySchema),
  handler: async ({ auth }) => {
    let data;
    if (auth.principal.type === 'oauth_token' && reachLister) {
      data = await reachLister(auth);
    } else {
      const w = (await Workspace.current(auth.workspaceId).select('id', 'name'))!;
      data = [{ id: w.id, name: w.name, isDefault: true, reach: 'member' as const }];
    }
    return onlyPage(data);
  },
});

export const getWorkspaceContext = defineOperation({
  name: 'workspaces.context',
  summary: 'One-call overview: workspace, principal, review gate and up to 25 projects with streaks.',
  kind: 'read',
  scopes: { allOf: ['workspace:read'] },
  clientRole: 'allow',
  input: getWorkspaceContextInput,
  output: single(workspaceContextSchema),
  handler: async ({ auth }) => {
    const { w, workspace, principal } = await workspaceAndPrincipal(auth);
    const cap = config.limits.contextProjects;
    const rows = (await projectQuery(auth)
      .orderBy([
        { column: 'projects.created_at', order: 'desc' },
        { column: 'projects.id', order: 'desc' },
      ])
      .limit(cap + 1)) as ProjectRow[];
    const now = new Date();
    const shown = rows.slice(0, cap);
    // spec 2.4: streaks come from the publish history (lib/streaks.ts), one query for the page.
    const streaks = await computeStreaks(shown, now);
    return {
      data: {
        workspace,
        principal,
        requireReviewWorkflow: w.require_review_workflow,
        projects: shown.map((r) => ({ ...presentProject(r, now), streak: streaks.get(r.id) ?? null })),
        projectsTruncated: rows.length > cap,
      },
    };
  },
});
