import { z } from 'zod';
import { component, objectComponent } from './output';
import { planLimits } from '../config';
import { projectShape, streakSchema } from './projects';

// spec 2.2 / 2.3 / 2.4: the workspace, the principal and the workspace context.

export const workspaceSchema = objectComponent('Workspace', {
  id: z.string().describe('org_*'),
  name: z.string(),
  plan: z.string().describe('Plan name in upper case.'),
  features: z.record(z.string(), z.boolean()).describe('Unknown keys must be treated as false.'),
});

export const principalSchema = component(
  'Principal',
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('api_key'), id: z.string().describe('key_*'), scopes: z.array(z.string()) }).strict(),
    z
      .object({
        type: z.literal('oauth_token'),
        id: z.string().describe('oat_*'),
        clientId: z.string(),
        actingUserId: z.string(),
        scopes: z.array(z.string()),
        defaultProject: z.object({ id: z.string(), name: z.string() }).strict().nullable(),
      })
      .strict(),
  ]),
);

export const workspaceListEntrySchema = objectComponent('WorkspaceListEntry', {
  id: z.string(),
  name: z.string(),
  isDefault: z.boolean(),
  reach: z.enum(['member', 'agency_owner']),
});

export const workspaceContextSchema = objectComponent('WorkspaceContext', {
  workspace: workspaceSchema,
  principal: principalSchema,
  requireReviewWorkflow: z.boolean(),
  projects: z.array(z.object({ ...projectShape, streak: streakSchema.nullable() }).strict()),
  projectsTruncated: z.boolean(),
});

export const workspaceMeSchema = objectComponent('WorkspaceMe', {
  workspace: workspaceSchema,
  principal: principalSchema,
  features: z.record(z.string(), z.boolean()),
});

export type Workspace = z.infer<typeof workspaceSchema>;
export type Principal = z.infer<typeof principalSchema>;

/** A workspace as loadWorkspace reads it, with the plan of the workspace that bills it. */
export interface WorkspaceRow {
  id: string;
  name: string;
  plan: string;
  feature_overrides: Record<string, boolean>;
  require_review_workflow: boolean;
  billing_plan: string | null;
}

export function effectivePlan(w: Pick<WorkspaceRow, 'plan' | 'billing_plan'>): string {
  return w.billing_plan ?? w.plan;
}

export function presentWorkspace(w: WorkspaceRow): Workspace {
  const plan = effectivePlan(w);
  return { id: w.id, name: w.name, plan, features: { ...planLimits(plan).features, ...w.feature_overrides } };
}

/** The calling principal as far as its answer shows it (api/auth/context.ts resolves it per request). */
export type Caller =
  | { type: 'api_key'; id: string; scopes: string[] }
  | { type: 'oauth_token'; id: string; clientId: string; actingUserId: string; scopes: string[] };

/** `defaultProject`: an OAuth token's default project, when the caller can still see it. */
export function presentPrincipal(p: Caller, defaultProject: { id: string; name: string } | null = null): Principal {
  if (p.type === 'api_key') return { type: p.type, id: p.id, scopes: p.scopes };
  return { type: p.type, id: p.id, clientId: p.clientId, actingUserId: p.actingUserId, scopes: p.scopes, defaultProject };
}
