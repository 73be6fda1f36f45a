import { z } from 'zod';
import { component } from '../../output';
import { projectShape, streakSchema } from '../projects/schema';

// spec 2.2 / 2.3 / 2.4: the workspace, the principal and the workspace context.

export const workspaceSchema = component(
  'Workspace',
  z
    .object({
      id: z.string().describe('org_*'),
      name: z.string(),
      plan: z.string().describe('Plan name in upper case.'),
      features: z.record(z.string(), z.boolean()).describe('Unknown keys must be treated as false.'),
    })
    .strict(),
);

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

export const workspaceListEntrySchema = component(
  'WorkspaceListEntry',
  z
    .object({
      id: z.string(),
      name: z.string(),
      isDefault: z.boolean(),
      reach: z.enum(['member', 'agency_owner']),
    })
    .strict(),
);

export const workspaceContextSchema = component(
  'WorkspaceContext',
  z
    .object({
      workspace: workspaceSchema,
      principal: principalSchema,
      requireReviewWorkflow: z.boolean(),
      projects: z.array(z.object({ ...projectShape, streak: streakSchema.nullable() }).strict()),
      projectsTruncated: z.boolean(),
    })
    .strict(),
);

export const workspaceMeSchema = component(
  'WorkspaceMe',
  z
    .object({
      workspace: workspaceSchema,
      principal: principalSchema,
      features: z.record(z.string(), z.boolean()),
    })
    .strict(),
);

export type Workspace = z.infer<typeof workspaceSchema>;
export type Principal = z.infer<typeof principalSchema>;
