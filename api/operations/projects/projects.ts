import { page, single } from '../../output';
import { projectSchema, listProjectsInput, getProjectInput } from './schema';
import { defineOperation } from '../../operation';
import { keysetPage, parseLimit } from '../../pagination';
import { presentProject, type ProjectRow } from '../../../lib/presenters/projects';
import { projectQuery } from './queries';
import { requireProject } from './resolve';

export const listProjects = defineOperation({
  name: 'projects.list',
  summary: 'List the projects of the workspace, newest first.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
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
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  input: getProjectInput,
  output: single(projectSchema),
  handler: async ({ auth }, input) => {
    return { data: presentProject(await requireProject(auth, input.projectId)) };
  },
});
