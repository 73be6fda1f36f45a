import { z } from 'zod';
import { authenticate } from '../../auth/authenticate';
import { listTeam } from '../../operations/team/team';
import { getUsage } from '../../operations/usage/usage';
import { getCurrentWorkspace, getWorkspaceContext, listWorkspaces } from '../../operations/workspaces/workspaces';
import { parseInput } from '../../validation';
import { page } from '../../output';
import { workspaceListEntrySchema } from '../../operations/workspaces/schema';
import { operationTool, rateLimitTool, READ, toolOutputSchema, type ToolDefinition } from '../tool';

// spec 4.9: get_workspace, list_workspaces, switch_workspace. The active workspace is the
// session's (4.2 Service-Workspace-Id rules); these three are where an agent sees and moves it.

export const getWorkspaceTool = operationTool(getCurrentWorkspace, {
  name: 'get_workspace',
  title: 'Get the active workspace',
  description:
    'The active workspace of this session (id, name, plan, features), the calling principal with its scopes and, for an OAuth grant, the default project pinned at consent.',
  annotations: { ...READ, idempotentHint: true },
});

// Additions (spec 9.3): the REST reads that had no tool, so an agent sees what a script sees.
export const getWorkspaceContextTool = operationTool(getWorkspaceContext, {
  name: 'get_workspace_context',
  title: 'Get the workspace overview',
  description:
    'One-call overview (spec 2.4): the workspace, the principal, the review gate (requireReviewWorkflow) and up to 25 projects with their streaks (projectsTruncated when there are more). Requires workspace:read.',
  annotations: { ...READ, idempotentHint: true },
});

export const listTeamTool = operationTool(listTeam, {
  name: 'list_team',
  title: 'List the team',
  description:
    'Members of the active workspace with their role, roleLabel (Admin, Member, Client) and assigned projects; one page of 100 (truncated, totalCount, projectsTruncated). Requires workspace:read.',
  annotations: { ...READ, idempotentHint: true },
});

export const getUsageTool = operationTool(getUsage, {
  name: 'get_usage',
  title: 'Get usage meters',
  description:
    'Usage meters (spec 2.16): whether the next AI job would be refused (canGenerate, blockedBy), the weekly AI budget of the project (projectId) or the workspace pool, storage and the daily API spend cap. Requires workspace:read.',
  annotations: { ...READ, idempotentHint: true },
});

export const listWorkspacesTool = operationTool(listWorkspaces, {
  name: 'list_workspaces',
  title: 'List reachable workspaces',
  description:
    'Workspaces this credential can reach: id, name, isDefault (the one pinned at consent), reach (member or agency_owner) and isActive (the one this session works in; move it with switch_workspace). Requires workspace:read.',
  scopes: { allOf: ['workspace:read'] },
  annotations: { ...READ, idempotentHint: true },
  // The one field the REST twin cannot have: which entry this session is working in.
  output: page(workspaceListEntrySchema.extend({ isActive: z.boolean() }).strict()),
  finish: async (ctx, body) => ({
    ...body,
    data: (body.data as Array<Record<string, unknown>>).map((w) => ({ ...w, isActive: w.id === ctx.request.auth.workspaceId })),
  }),
});

const switchWorkspaceInput = z.object({ workspaceId: z.string().min(1).max(100) }).strict();

export const switchWorkspaceTool: ToolDefinition = {
  name: 'switch_workspace',
  title: 'Switch the active workspace',
  description:
    'Moves this session to another workspace the credential reaches (the rules of the Service-Workspace-Id header: any workspace of the consenting user or a client workspace of an agency they own; an API key only its own). Every later call of the session works there. Answers like get_workspace. The default project never follows into another workspace.',
  scopes: 'any',
  annotations: {
    title: 'Switch the active workspace',
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  inputSchema: {
    type: 'object',
    properties: { workspaceId: { type: 'string', minLength: 1, maxLength: 100, description: 'An org_ id from list_workspaces.' } },
    required: ['workspaceId'],
    additionalProperties: false,
  },
  outputSchema: toolOutputSchema(getCurrentWorkspace.output),
  async call(ctx, args) {
    const { token, apiVersion, requestId } = ctx.request;
    const input = parseInput(switchWorkspaceInput, args, 'body');
    // Re-authenticated for the target exactly as a request carrying Service-Workspace-Id:
    // unreachable and nonexistent workspaces both answer workspace_unavailable.
    const next = await authenticate({ token, targetWorkspaceId: input.workspaceId, resource: 'mcp' });
    await rateLimitTool('read', next);
    await ctx.session.switchWorkspace(next.workspaceId);
    const body = await getCurrentWorkspace.handler({ auth: next, requestId, apiVersion }, {});
    return { body };
  },
};
