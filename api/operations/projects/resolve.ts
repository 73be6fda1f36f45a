import { errors } from '../../../lib/errors';
import type { AuthContext } from '../../auth/context';
import { findProject, type ProjectRow } from './present';

/**
 * spec 4.6 / 4.9 default project: the named project, else the project pinned at consent of an
 * OAuth token; with neither the answer is invalid_request, on both doors alike. Used by the
 * operations whose REST form also takes `projectId` as optional (ideas, analytics).
 */
export async function resolveProjectOrDefault(auth: AuthContext, projectId: string | undefined): Promise<ProjectRow> {
  if (projectId !== undefined) {
    const project = await findProject(auth, projectId);
    if (!project) throw errors.notFound('project');
    return project;
  }
  const pinned = auth.principal.type === 'oauth_token' ? auth.principal.defaultProjectId : null;
  const project = pinned ? await findProject(auth, pinned) : undefined;
  if (!project) {
    throw errors.invalidRequest(
      '`projectId` is required: this credential has no default project (none was pinned at consent, it is gone, or it belongs to another workspace).',
      { field: 'projectId' },
    );
  }
  return project;
}
