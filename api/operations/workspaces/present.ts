import { planLimits } from '../../../lib/config';
import { Workspace as WorkspaceModel } from '../../../lib/models';
import type { AuthContext } from '../../auth/context';
import { findProject, projectName } from '../projects/present';
import type { Principal, Workspace } from './schema';

export interface WorkspaceRow {
  id: string;
  name: string;
  plan: string;
  feature_overrides: Record<string, boolean>;
  require_review_workflow: boolean;
  billing_plan: string | null;
}

/** Live read (spec 2.2: /workspaces/me is not cacheable and reflects live plan state). */
export async function loadWorkspace(workspaceId: string): Promise<WorkspaceRow | undefined> {
  return WorkspaceModel.current(workspaceId)
    .alias('w')
    .leftJoin('workspaces as b', 'b.id', 'w.billing_workspace_id')
    .select('w.id', 'w.name', 'w.plan', 'w.feature_overrides', 'w.require_review_workflow', 'b.plan as billing_plan')
    .castTo<WorkspaceRow | undefined>();
}

export function effectivePlan(w: Pick<WorkspaceRow, 'plan' | 'billing_plan'>): string {
  return w.billing_plan ?? w.plan;
}

export function presentWorkspace(w: WorkspaceRow): Workspace {
  const plan = effectivePlan(w);
  return { id: w.id, name: w.name, plan, features: { ...planLimits(plan).features, ...w.feature_overrides } };
}

export async function presentPrincipal(auth: AuthContext): Promise<Principal> {
  const p = auth.principal;
  if (p.type === 'api_key') return { type: p.type, id: p.id, scopes: p.scopes };
  let defaultProject: { id: string; name: string } | null = null;
  if (p.defaultProjectId) {
    const row = await findProject(auth, p.defaultProjectId);
    if (row) defaultProject = { id: row.id, name: projectName(row) };
  }
  return { type: p.type, id: p.id, clientId: p.clientId, actingUserId: p.actingUserId, scopes: p.scopes, defaultProject };
}
