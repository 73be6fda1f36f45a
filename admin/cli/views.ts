import { presentProject, type ProjectRow } from '../../lib/presenters/projects';
import { presentWorkspace } from '../../lib/presenters/workspaces';
import { roleLabel } from '../../lib/roles';

// JSON shapes printed by the operator CLI. Where the API has a presenter for the same thing
// (workspace features, project name and connection block) it is reused, so an operator sees
// what a client of the API would see, plus the internal fields needed to provision further.

type Row = Record<string, any>;

function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** `billingPlan` is the plan of the paying agency workspace, when there is one (spec 5.5). */
export function workspaceView(w: Row, billingPlan: string | null = null) {
  const api = presentWorkspace({
    id: w.id,
    name: w.name,
    plan: w.plan,
    feature_overrides: w.feature_overrides ?? {},
    require_review_workflow: w.require_review_workflow,
    billing_plan: billingPlan,
  });
  return {
    id: w.id as string,
    name: w.name as string,
    plan: w.plan as string,
    // What /v1/workspaces/me reports: a workspace billed to an agency carries the agency's plan.
    effectivePlan: api.plan,
    features: api.features,
    featureOverrides: (w.feature_overrides ?? {}) as Record<string, boolean>,
    requireReviewWorkflow: Boolean(w.require_review_workflow),
    billingWorkspaceId: (w.billing_workspace_id ?? null) as string | null,
    aiEnforcement: w.ai_enforcement as string,
    createdAt: iso(w.created_at),
    updatedAt: iso(w.updated_at),
  };
}

export function projectView(row: Row) {
  return {
    ...presentProject(row as ProjectRow),
    workspaceId: row.workspace_id as string,
    slug: row.slug as string,
    timezone: row.timezone as string,
    language: row.language as string,
    connectionId: (row.connection_id ?? null) as string | null,
    networkOrganizationId: (row.network_organization_id ?? null) as string | null,
  };
}

export function keyView(k: Row, now = Date.now()) {
  const status = k.revoked_at ? 'revoked' : k.expires_at && k.expires_at.getTime() <= now ? 'expired' : 'active';
  return {
    id: k.id as string,
    workspaceId: k.workspace_id as string,
    name: k.name as string,
    mode: k.mode as string,
    last4: k.last4 as string,
    scopes: k.scopes as string[],
    status,
    expiresAt: iso(k.expires_at),
    revokedAt: iso(k.revoked_at),
    lastUsedAt: iso(k.last_used_at),
    createdAt: iso(k.created_at),
  };
}

export function memberView(m: Row) {
  return {
    userId: m.user_id as string,
    email: m.email as string,
    name: m.name as string,
    role: m.role as string,
    roleLabel: roleLabel(m.role),
    // Empty means the member is not narrowed to particular projects.
    projectIds: (m.project_ids ?? []) as string[],
    joinedAt: iso(m.created_at),
  };
}

export function userView(u: Row) {
  return {
    id: u.id as string,
    email: u.email as string,
    name: u.name as string,
    hasPassword: Boolean(u.has_password),
    createdAt: iso(u.created_at),
    ...(u.memberships
      ? {
          workspaces: (u.memberships as Row[]).map((m) => ({
            workspaceId: m.workspace_id as string,
            role: m.role as string,
            roleLabel: roleLabel(m.role),
          })),
        }
      : {}),
  };
}

/** A final generation job whose spend is not settled yet (lib/spend/settlement.ts UnsettledJob). */
export function unsettledJobView(j: Row) {
  return {
    id: j.id as string,
    workspaceId: j.workspace_id as string,
    type: j.type as string,
    status: j.status as string,
    completedAt: iso(j.completed_at),
    // Still counted against the day's cap and the week's budget until settled.
    reservedCents: j.reserved_cents as number,
    // What replaces the reservation on the meters once settled.
    costCents: j.cost_cents as number,
    ageSeconds: j.age_seconds as number,
  };
}
