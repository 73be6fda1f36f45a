import { z } from 'zod';
// spec 2.2 / 2.3 / 2.4: the workspace answers (lib/presenters/workspaces.ts).

export {
  principalSchema,
  workspaceContextSchema,
  workspaceListEntrySchema,
  workspaceMeSchema,
  workspaceSchema,
  type Principal,
  type Workspace,
} from '../../../lib/presenters/workspaces';

export const getCurrentWorkspaceInput = z.object({}).strict();

export const listWorkspacesInput = z.object({}).strict();

export const getWorkspaceContextInput = z.object({}).strict();
