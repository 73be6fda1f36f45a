import Router from '@koa/router';
import { health, healthAuth } from '../operations/health/health';
import { createNote, getNote, listNotes } from '../operations/notes/notes';
import { listPostStatuses } from '../operations/posts/postStatuses';
import { createPost, getPost, listPosts, updatePost } from '../operations/posts/posts';
import { getProject, listProjects } from '../operations/projects/projects';
import { listTeam } from '../operations/team/team';
import { getCurrentWorkspace, getWorkspaceContext, listWorkspaces } from '../operations/workspaces/workspaces';
import { route } from './adapter';

// The REST catalogue (spec 4.1). Each line is a path and the operation behind it.
export function restRouter(): Router {
  const r = new Router();
  route(r, 'get', '/v1/health', health);
  route(r, 'get', '/v1/health/auth', healthAuth);
  route(r, 'get', '/v1/workspaces/me', getCurrentWorkspace);
  route(r, 'get', '/v1/workspaces/context', getWorkspaceContext);
  route(r, 'get', '/v1/workspaces', listWorkspaces);
  route(r, 'get', '/v1/team', listTeam);
  route(r, 'get', '/v1/projects', listProjects);
  route(r, 'get', '/v1/projects/:projectId', getProject);
  route(r, 'get', '/v1/notes', listNotes);
  route(r, 'get', '/v1/notes/:noteId', getNote);
  route(r, 'post', '/v1/notes', createNote);
  route(r, 'get', '/v1/posts', listPosts);
  route(r, 'post', '/v1/posts', createPost);
  route(r, 'get', '/v1/posts/:postId', getPost);
  route(r, 'patch', '/v1/posts/:postId', updatePost);
  route(r, 'get', '/v1/post-statuses', listPostStatuses);
  return r;
}
