import Router from '@koa/router';
import { health, healthAuth } from '../operations/health/health';
import { createNote, getNote, listNotes } from '../operations/notes/notes';
import { listPostStatuses } from '../operations/posts/postStatuses';
import { createPost, getPost, listPosts, updatePost } from '../operations/posts/posts';
import { getProject, listProjects } from '../operations/projects/projects';
import { listTeam } from '../operations/team/team';
import { getCurrentWorkspace, getWorkspaceContext, listWorkspaces } from '../operations/workspaces/workspaces';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '../operations/webhooks/endpoints';
import { createGeneration } from '../operations/generations/generations';
import { cancelJob, getJob, listJobs } from '../operations/jobs/jobs';
import { getUsage } from '../operations/usage/usage';
import { createIdea, getIdea, listIdeas, updateIdea } from '../operations/ideas/ideas';
import { listCalendar } from '../operations/calendar/calendar';
import { getAnalyticsOverview, getCrossWorkspaceOverview, listPostAnalytics, searchViralPosts } from '../operations/analytics/analytics';
import { listCompanyPages } from '../operations/companyPages/companyPages';
import { getMedia, importMedia, IMPORT_BODY_LIMIT_BYTES, listMedia } from '../operations/media/media';
import { createImageGeneration } from '../operations/media/generations';
import { updatePostMedia } from '../operations/media/postMedia';
import { createUpload } from '../operations/uploads/uploads';
import { approveReview, listAwaitingReview, rejectReview, requestReview } from '../operations/reviews/reviews';
import { createSource, getSource, SOURCE_BODY_LIMIT_BYTES } from '../operations/sources/sources';
import { createKnowledge, getKnowledge, listKnowledge } from '../operations/knowledge/knowledge';
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
  route(r, 'post', '/v1/posts/generations', createGeneration);
  route(r, 'get', '/v1/jobs', listJobs);
  route(r, 'get', '/v1/jobs/:jobId', getJob);
  route(r, 'post', '/v1/jobs/:jobId/cancel', cancelJob);
  route(r, 'get', '/v1/usage', getUsage);
  route(r, 'patch', '/v1/posts/:postId/media', updatePostMedia);
  route(r, 'post', '/v1/uploads', createUpload);
  // spec 4.5 sources; an inline file (spec 4.9) of 25 MB decoded fits the body limit.
  route(r, 'post', '/v1/sources', createSource, { body: { maxBytes: SOURCE_BODY_LIMIT_BYTES, tooLarge: 'envelope' } });
  route(r, 'get', '/v1/sources/:sourceId', getSource);
  // spec 4.7: an inline image body over the edge limit is a bare 413, before JSON parsing.
  route(r, 'post', '/v1/media', importMedia, { body: { maxBytes: IMPORT_BODY_LIMIT_BYTES, tooLarge: 'bare' } });
  route(r, 'get', '/v1/media', listMedia);
  route(r, 'post', '/v1/media/generations', createImageGeneration);
  route(r, 'get', '/v1/media/:mediaId', getMedia);
  // Knowledge base (spec 4.5; the list and search are 9.3 additions; docs/knowledge.md).
  route(r, 'post', '/v1/knowledge', createKnowledge);
  route(r, 'get', '/v1/knowledge', listKnowledge);
  route(r, 'get', '/v1/knowledge/:documentId', getKnowledge);
  route(r, 'get', '/v1/webhook-endpoints', listWebhookEndpoints);
  route(r, 'post', '/v1/webhook-endpoints', createWebhookEndpoint);
  route(r, 'get', '/v1/webhook-endpoints/:endpointId', getWebhookEndpoint);
  route(r, 'patch', '/v1/webhook-endpoints/:endpointId', updateWebhookEndpoint);
  route(r, 'delete', '/v1/webhook-endpoints/:endpointId', deleteWebhookEndpoint);
  route(r, 'post', '/v1/webhook-endpoints/:endpointId/rotate-secret', rotateWebhookSecret);
  route(r, 'get', '/v1/webhook-endpoints/:endpointId/deliveries', listWebhookDeliveries);
  // Planning: the idea board (spec 4.6; create/list/get are 9.3 additions).
  route(r, 'get', '/v1/ideas', listIdeas);
  route(r, 'post', '/v1/ideas', createIdea);
  route(r, 'get', '/v1/ideas/:ideaId', getIdea);
  route(r, 'patch', '/v1/ideas/:ideaId', updateIdea);
  route(r, 'get', '/v1/calendar', listCalendar);
  route(r, 'get', '/v1/company-pages', listCompanyPages);
  route(r, 'get', '/v1/analytics/overview', getAnalyticsOverview);
  route(r, 'get', '/v1/analytics/posts', listPostAnalytics);
  route(r, 'get', '/v1/analytics/cross-workspace/overview', getCrossWorkspaceOverview);
  route(r, 'get', '/v1/viral-posts', searchViralPosts);
  // Review before publishing (docs/review.md; spec 9.3 additions).
  route(r, 'post', '/v1/posts/:postId/review', requestReview);
  route(r, 'post', '/v1/posts/:postId/review/approve', approveReview);
  route(r, 'post', '/v1/posts/:postId/review/reject', rejectReview);
  route(r, 'get', '/v1/reviews/awaiting', listAwaitingReview);
  return r;
}
