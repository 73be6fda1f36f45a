import { z } from 'zod';
import { deletePost } from '../../operations/posts/destroy';
import { listPostStatuses } from '../../operations/posts/postStatuses';
import { createPost, getPost, listPosts, updatePost } from '../../operations/posts/posts';
import { schedulePost } from '../../operations/posts/schedule';
import { operationTool, READ, WRITE } from '../tool';
import { page } from '../../output';
import { postStatusSchema } from '../../operations/posts/schema';

// spec 4.9: list_posts, get_post, list_post_statuses (posts:read); create_post_draft,
// update_post, schedule_post (posts:write); delete_post (posts:destroy, two-phase).

/** Scheduling hands the post to the publisher, which posts to the social network. */
const PUBLISHES = { ...WRITE, openWorldHint: true };

export const listPostsTool = operationTool(listPosts, {
  name: 'list_posts',
  title: 'List posts',
  description:
    'Posts of a project, newest first. status filters on a comma-separated list of waitingProcessing, draft, waitingApproval, approved, rejected, scheduled, published, suggested, failed_to_publish; dateFrom/dateTo (YYYY-MM-DD) on creation. Cursor-paginated: keep the filters unchanged while following next_cursor. Requires posts:read.',
  annotations: { ...READ, idempotentHint: true },
  defaultProject: true,
});

export const getPostTool = operationTool(getPost, {
  name: 'get_post',
  title: 'Get a post',
  description: 'One post. Requires posts:read.',
  annotations: { ...READ, idempotentHint: true },
});

export const listPostStatusesTool = operationTool(listPostStatuses, {
  name: 'list_post_statuses',
  title: 'List post statuses',
  description:
    "The workspace's custom post statuses: statusId (what update_post takes; also as id), title, category and post count. Requires posts:read.",
  annotations: { ...READ, idempotentHint: true },
  // spec 4.9: the tool "gives statusId and category"; `id` stays for the REST twin's shape.
  output: page(postStatusSchema.extend({ statusId: z.string() }).strict()),
  finish: async (_ctx, body) => ({
    ...body,
    data: (body.data as Array<Record<string, unknown>>).map((s) => ({ statusId: s.id, ...s })),
  }),
});

export const createPostDraftTool = operationTool(createPost, {
  name: 'create_post_draft',
  title: 'Create a post draft',
  description:
    'Creates a draft; with a future scheduledFor (ISO 8601) the post is scheduled instead and publishes about 2 minutes after that time. The network connection is not checked at create time. Requires posts:write.',
  annotations: PUBLISHES,
  defaultProject: true,
  idempotent: true,
});

export const updatePostTool = operationTool(updatePost, {
  name: 'update_post',
  title: 'Update a post',
  description:
    'Partial update: content, title (empty string lets the service name it), contentType, statusCategory or statusId (the workspace board label only: it never schedules, unschedules or publishes; read status and scheduledAt for that), scheduledFor (the only argument that moves the schedule: a future time schedules, null unschedules; checks the network connection first and answers conflict when it cannot publish), autoLike, autoComment. Requires posts:write.',
  annotations: PUBLISHES,
  idempotent: true,
});

export const schedulePostTool = operationTool(schedulePost, {
  name: 'schedule_post',
  title: 'Schedule a post',
  description:
    "Schedules or reschedules a post for a future time (ISO 8601; without an offset, the project's timezone). The network connection is verified first: an unusable one answers conflict with details.reason and details.reconnectUrl, and the post is left unchanged. Requires posts:write.",
  annotations: { ...PUBLISHES, idempotentHint: true },
  idempotent: true,
});

export const deletePostTool = operationTool(deletePost, {
  name: 'delete_post',
  title: 'Delete a post',
  description:
    "Two-phase delete. Call it first without confirmationToken: nothing changes, and the answer shows the post, what deleting it would do (a scheduled post never publishes; a published post stays live on the network and keeps its analytics, only the service's copy goes) and a confirmationToken valid for 5 minutes for this post and this credential. Confirm with the user, then call again with the token to delete. Requires posts:destroy, which is never implied by posts:write.",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  argumentNotes: { confirmationToken: 'The token from the first call; omit it to get the preview and a token.' },
});
