import { errors } from '../../../lib/errors';
import type { AuthContext } from '../../auth/context';
import type { AiLimits } from '../../../lib/spend/meters';
import type { ProjectRow } from '../../../lib/presenters/projects';
import { findProject, findProjectWithAiLimits } from './queries';

// The one `projectId` rule of both doors (spec 4.6, 4.7, 4.9, 7.2 "missing projectId ... agent
// tool without project"): an operation that acts on a project takes the named one (404 when it
// is not visible), else the project pinned at consent of an OAuth token; an API key carries no
// default project, so without `projectId` the answer is 400 invalid_request. The MCP door
// defaults `projectId` through `defaultProject` before validation (api/mcp/tool.ts); operations
// whose REST form takes `projectId` as optional (ideas, analytics, the own-image import,
// knowledge) call `resolveProjectOrDefault`. A `projectId` that only filters or labels (list
// filters, usage, an upload handle, which may serve workspace-wide knowledge) is not a target
// and stays optional; `projectOrDefault` fills such a label from the same pinned default.

const NO_DEFAULT =
  '`projectId` is required: this credential has no default project (none was pinned at consent, it is gone, or it belongs to another workspace).';

/** The consent-pinned project of an OAuth token, when it is still visible; never for an API key. */
async function pinnedProject(auth: AuthContext): Promise<ProjectRow | undefined> {
  const pinned = auth.principal.type === 'oauth_token' ? auth.principal.defaultProjectId : null;
  return pinned ? findProject(auth, pinned) : undefined;
}

/** The caller's default project, else 400 invalid_request. */
export async function defaultProject(auth: AuthContext): Promise<ProjectRow> {
  const project = await pinnedProject(auth);
  if (!project) throw errors.invalidRequest(NO_DEFAULT, { field: 'projectId' });
  return project;
}

/** The named project, else 404 (spec 1 rule 1: a project of another workspace is not found). */
export async function requireProject(auth: AuthContext, projectId: string): Promise<ProjectRow> {
  const project = await findProject(auth, projectId);
  if (!project) throw errors.notFound('project');
  return project;
}

/** requireProject, with the AI limits an AI job's reservation checks read in the same statement. */
export async function requireProjectWithAiLimits(auth: AuthContext, projectId: string): Promise<{ project: ProjectRow; limits: AiLimits }> {
  const found = await findProjectWithAiLimits(auth, projectId);
  if (!found) throw errors.notFound('project');
  return found;
}

/** A `projectId` that filters a list: a project the caller cannot see is 404, never an empty page. */
export async function checkProjectFilter(auth: AuthContext, projectId: string | undefined): Promise<void> {
  if (projectId !== undefined) await requireProject(auth, projectId);
}

/** Narrows the list query `q` to the project of a `projectId` filter on `column`, checked as checkProjectFilter. */
export async function filterByProject(
  auth: AuthContext,
  q: { where(column: string, value: string): unknown },
  column: string,
  projectId: string | undefined,
): Promise<void> {
  if (projectId === undefined) return;
  await requireProject(auth, projectId);
  q.where(column, projectId);
}

/** The named project (404 when not visible), else the caller's default project, else 400 invalid_request. */
export async function resolveProjectOrDefault(auth: AuthContext, projectId: string | undefined): Promise<ProjectRow> {
  return projectId === undefined ? defaultProject(auth) : requireProject(auth, projectId);
}

/** A project label that may be absent: the named project (404 when not visible), else the default project, else null. */
export async function projectOrDefault(auth: AuthContext, projectId: string | undefined): Promise<string | null> {
  if (projectId !== undefined) return (await resolveProjectOrDefault(auth, projectId)).id;
  return (await pinnedProject(auth))?.id ?? null;
}
