import { getProject, listProjects } from '../../operations/projects/projects';
import { operationTool, READ } from '../tool';

// spec 4.9: list_projects, get_project (projects:read; REST accepts any token, spec 4.1).

export const listProjectsTool = operationTool(listProjects, {
  name: 'list_projects',
  title: 'List projects',
  description:
    'Projects of the active workspace, newest first (personal brands, company pages, amplifiers), each with its network connection block: branch on network.canPublish before scheduling. Cursor-paginated: pass pagination.next_cursor back as `cursor` until has_more is false. Requires projects:read.',
  scopes: { allOf: ['projects:read'] },
  annotations: { ...READ, idempotentHint: true },
});

export const getProjectTool = operationTool(getProject, {
  name: 'get_project',
  title: 'Get a project',
  description: 'One project with its network connection block. A project of another workspace is not_found. Requires projects:read.',
  scopes: { allOf: ['projects:read'] },
  annotations: { ...READ, idempotentHint: true },
});
