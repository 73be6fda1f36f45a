import { createIdea, getIdea, listIdeas, updateIdea } from '../../operations/ideas/ideas';
import { operationTool, READ, WRITE } from '../tool';

// The idea board as tools (spec 4.6; 9.3 allows tools beyond the 4.9 table). The operations
// resolve the default project themselves (REST takes the same rule, spec 4.6), so the tools
// pass `projectId` through as given.

const PROJECT_NOTE = 'Defaults to the project pinned when access was granted; required for API keys.';

export const listIdeasTool = operationTool(listIdeas, {
  name: 'list_ideas',
  title: 'List ideas',
  description:
    "Ideas on a project's board, newest first, each with its derived status (inbox, in_production, review, done) and linked post. status filters on the derived status (comma-separated). Cursor-paginated. Requires ideas:write.",
  scopes: { allOf: ['ideas:write'] },
  annotations: { ...READ, idempotentHint: true },
  argumentNotes: { projectId: PROJECT_NOTE },
});

export const getIdeaTool = operationTool(getIdea, {
  name: 'get_idea',
  title: 'Get an idea',
  description: 'One idea with its brief fields, derived status and linked post. Requires ideas:write.',
  scopes: { allOf: ['ideas:write'] },
  annotations: { ...READ, idempotentHint: true },
});

export const createIdeaTool = operationTool(createIdea, {
  name: 'create_idea',
  title: 'Create an idea',
  description:
    "Adds an idea (title, body, brief fields pillar/postType/assetFormat/hook/topic, a scheduledFor date) to a project's board. Requires ideas:write.",
  scopes: { allOf: ['ideas:write'] },
  annotations: WRITE,
  idempotent: true,
  argumentNotes: { projectId: PROJECT_NOTE },
});

export const updateIdeaTool = operationTool(updateIdea, {
  name: 'update_idea',
  title: 'Update an idea',
  description:
    'Edits an idea: only the fields given change, null clears a brief field; status can be written as inbox or in_production only (review and done follow the linked post). Requires ideas:write.',
  scopes: { allOf: ['ideas:write'] },
  annotations: WRITE,
  idempotent: true,
  argumentNotes: { projectId: PROJECT_NOTE },
});
