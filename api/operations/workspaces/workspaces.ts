import { z } from 'zod';
import { config } from '../../../lib/config';
import { errors } from '../../../lib/errors';
import { Workspace } from '../../../lib/models';
import type { AuthContext } from '../../auth/context';
import { page, single } from '../../output';
import { workspaceContextSchema, workspaceListEntrySchema, workspaceMeSchema } from './schema';
import { defineOperation } from '../../operation';
import { computeStreaks } from '../../../lib/streaks';
import { presentProject, projectQuery, type ProjectRow } from '../projects/present';
import { loadWorkspace, presentPrincipal, presentWorkspace } from './present';
import { onlyPage } from '../../pagination';

async function workspaceAndPrincipal(auth: AuthContext) {
  const w = await loadWorkspace(auth.workspaceId);
  if (!w) throw errors.workspaceUnavailable();
  const workspace = presentWorkspace(w);
  return { w, workspace, principal: await presentPrincipal(auth) };
}

export const getCurrentWorkspace = defineOperation({
  name: 'workspaces.me',
  summary: 'The active workspace, the calling principal and the plan features.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  inputSource: 'query',
  input: z.object({}).strict(),
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
  inputSource: 'query',
  input: z.object({}).strict(),
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
  inputSource: 'query',
  input: z.object({}).strict(),
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
