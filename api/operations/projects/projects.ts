import { page, single } from '../../output';
import { projectSchema, listProjectsInput, getProjectInput } from './schema';
import { defineOperation } from '../../operation';
import { keysetPage, parseLimit } from '../../pagination';
import { presentProject, type ProjectRow } from '../../../lib/presenters/projects';
import { projectQuery } from './queries';
import { requireProject } from './resolve';

/** Who reads projects, also the company pages (spec 4.1): any valid token; client-role accounts read them normally (spec 5.4). */
export const projectReadAccess = { kind: 'read', scopes: 'any', clientRole: 'allow' } as const;

export const listProjects = defineOperation({
  name: 'projects.list',
  summary: 'List the projects of the workspace, newest first.',
  ...projectReadAccess,
  input: listProjectsInput,
  output: page(projectSchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit);
    const q = projectQuery(auth);
    if (input.type) q.where('projects.type', input.type);
    return keysetPage<ProjectRow, ReturnType<typeof presentProject>>(q, {
      limit,
      cursor: input.cursor,
      filters: { type: input.type },
      table: 'projects',
      present: (r) => presentProject(r),
    });
  },
});

export const getProject = defineOperation({
  name: 'projects.get',
  summary: 'One project with its network connection block.',
  ...projectReadAccess,
  input: getProjectInput,
  output: single(projectSchema),
  handler: async ({ auth }, input) => {
    return { data: presentProject(await requireProject(auth, input.projectId)) };
  },
});
