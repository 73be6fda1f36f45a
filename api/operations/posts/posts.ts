import { db } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { emitEvent } from '../../../lib/outbox';
import { presentPost, presentPostSummary, type PostRow } from '../../../lib/posts/present';
import { CATEGORY_TO_LEGACY, defaultStatus, type StatusCategory } from '../../../lib/posts/statuses';
import { autoTitle, clearSlot, insertPost, loadPostForUpdate, upsertSlot } from '../../../lib/posts/write';
import { parseInZone } from '../../../lib/time';
import type { AuthContext } from '../../auth/context';
import { scoped, visibleProjects } from '../../auth/context';
import { defineOperation } from '../../operation';
import { keysetPage, parseLimit } from '../../pagination';
import { findProject, type ProjectRow } from '../projects/present';
import { createPostInput, getPostInput, listPostsInput, updatePostInput } from './schema';
import { afterScheduleCommitted, verifyConnectionForScheduling } from './scheduling';

/** spec 5.4: a client-role account sees only posts in review, scheduled or published. */
export const CLIENT_VISIBLE_STATUSES = ['waitingApproval', 'scheduled', 'published'];

function postsOf(auth: AuthContext) {
  const q = scoped(auth, 'posts').whereNull('posts.deleted_at');
  if (auth.projectIds) q.whereIn('posts.project_id', [...auth.projectIds]);
  if (auth.role === 'client') q.whereIn('posts.status', CLIENT_VISIBLE_STATUSES);
  return q;
}

async function requireProject(auth: AuthContext, projectId: string): Promise<ProjectRow> {
  const project = await findProject(auth, projectId);
  if (!project) throw errors.notFound('project');
  return project;
}

/** A future instant from an ISO string, offset-less ones in the project's calendar timezone. */
function futureInstant(value: string, project: ProjectRow, field = 'scheduledFor'): Date {
  const at = parseInZone(value, project.timezone);
  if (Number.isNaN(at.getTime())) throw errors.unprocessable(`\`${field}\` is not a valid date-time.`);
  if (at.getTime() <= Date.now()) throw errors.unprocessable(`\`${field}\` must be in the future.`, { [field]: at.toISOString() });
  return at;
}

export const listPosts = defineOperation({
  name: 'posts.list',
  summary: 'List the posts of a project, newest first.',
  kind: 'read',
  scopes: { allOf: ['posts:read'] },
  clientRole: 'narrow',
  inputSource: 'query',
  input: listPostsInput,
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit);
    const statuses = input.status?.split(',').map((s) => s.trim());
    const q = postsOf(auth).where('posts.project_id', input.projectId)
      .select('posts.id', 'posts.project_id', 'posts.status', 'posts.content_type', 'posts.title', 'posts.content', 'posts.scheduled_at', 'posts.created_at', 'posts.updated_at');
    if (statuses) q.whereIn('posts.status', statuses);
    if (input.dateFrom) q.where('posts.created_at', '>=', `${input.dateFrom}T00:00:00Z`);
    if (input.dateTo) q.where('posts.created_at', '<', new Date(Date.parse(`${input.dateTo}T00:00:00Z`) + 86_400_000));
    const filters = { projectId: input.projectId, status: statuses?.slice().sort().join(','), dateFrom: input.dateFrom, dateTo: input.dateTo, role: auth.role };
    const page = await keysetPage<PostRow, ReturnType<typeof presentPostSummary>>(q, { limit, cursor: input.cursor, filters, table: 'posts', present: presentPostSummary });
    // Rows prove the project is the caller's (the query is scoped); only an empty page needs
    // the lookup that tells "no posts" from "no such project" (404) — one query saved per page.
    if (page.data.length === 0 && !(await visibleProjects(auth).where('projects.id', input.projectId).first('projects.id'))) throw errors.notFound('project');
    return page;
  },
});

export const getPost = defineOperation({
  name: 'posts.get',
  summary: 'One post.',
  kind: 'read',
  scopes: { allOf: ['posts:read'] },
  clientRole: 'narrow',
  inputSource: 'query',
  input: getPostInput,
  handler: async ({ auth }, input) => {
    const row = (await postsOf(auth).where('posts.id', input.postId).first()) as PostRow | undefined;
    if (!row) throw errors.notFound('post');
    return { data: presentPostSummary(row) };
  },
});

export const createPost = defineOperation({
  name: 'posts.create',
  summary: 'Create a draft, or a scheduled post when scheduledFor is in the future.',
  kind: 'write',
  scopes: { allOf: ['posts:write'] },
  clientRole: 'deny',
  inputSource: 'body',
  input: createPostInput,
  handler: async ({ auth }, input) => {
    const project = await requireProject(auth, input.projectId);
    // spec 3.1: the network token is not checked at create time.
    const scheduledAt = input.scheduledFor !== undefined ? futureInstant(input.scheduledFor, project) : null;
    const post = await db().transaction((trx) => insertPost(trx, {
      workspaceId: auth.workspaceId, projectId: project.id,
      content: input.content ?? ' ', title: input.title, contentType: input.contentType ?? 'PERSONAL', scheduledAt,
    }));
    if (scheduledAt) await afterScheduleCommitted(post);
    return { data: presentPost(post) };
  },
});

export const updatePost = defineOperation({
  name: 'posts.update',
  summary: 'Partial update: content, name, type, board status, schedule and engagement flags.',
  kind: 'write',
  scopes: { allOf: ['posts:write'] },
  clientRole: 'deny',
  inputSource: 'body',
  input: updatePostInput,
  handler: async ({ auth }, input) => {
    const existing = (await postsOf(auth).where('posts.id', input.postId).first('posts.id', 'posts.project_id', 'posts.status')) as PostRow | undefined;
    if (!existing) throw errors.notFound('post');
    const project = existing.project_id ? await findProject(auth, existing.project_id) : undefined;

    let newSchedule: Date | null | undefined;
    if (input.scheduledFor === null) newSchedule = null;
    else if (input.scheduledFor !== undefined) {
      if (!project) throw errors.unprocessable('This post has no project to publish to.');
      if (existing.status === 'published') throw errors.unprocessable('This post is already published; create a new post to publish again.');
      newSchedule = futureInstant(input.scheduledFor, project);
      // spec 3.1: verified before anything changes; a refusal leaves the post untouched.
      await verifyConnectionForScheduling(auth, project);
    }

    const result = await db().transaction(async (trx) => {
      const post = await loadPostForUpdate(trx, auth.workspaceId, input.postId, true);
      if (!post) throw errors.notFound('post');
      const patch: Record<string, unknown> = {};
      if (input.content !== undefined) patch.content = input.content;
      if (input.contentType !== undefined) patch.content_type = input.contentType;
      if (input.autoLike !== undefined) patch.auto_like = input.autoLike;
      if (input.autoComment !== undefined) patch.auto_comment = input.autoComment;
      if (input.title !== undefined) {
        patch.title = input.title;
        patch.title_auto = input.title === '';
      }
      const titleAuto = (patch.title_auto as boolean | undefined) ?? post.title_auto;
      const titleNow = (patch.title as string | undefined) ?? post.title;
      if (titleAuto && titleNow === '' && input.content !== undefined) {
        patch.title = autoTitle((patch.content as string | undefined) ?? post.content);
      }

      if (input.statusCategory !== undefined || input.statusId !== undefined) {
        const status = input.statusId !== undefined
          ? await trx('post_statuses').where({ workspace_id: auth.workspaceId, id: input.statusId }).first('id', 'category')
          : await defaultStatus(trx, auth.workspaceId, input.statusCategory!);
        if (!status) throw errors.unprocessable('`statusId` is not a status of this workspace; list them with GET /v1/post-statuses.', { statusId: input.statusId });
        patch.status_id = status.id;
        const legacy = CATEGORY_TO_LEGACY[status.category as StatusCategory];
        if (legacy && !['scheduled', 'published'].includes(post.status)) patch.status = legacy;
      }

      let scheduleEvent: 'post.scheduled' | 'post.unscheduled' | null = null;
      if (newSchedule instanceof Date) {
        patch.status = 'scheduled';
        patch.scheduled_at = newSchedule;
        patch.schedule_version = post.schedule_version + 1;
        patch.delivery = JSON.stringify({ state: 'scheduled', willRetry: false, retryUntil: null, detail: null });
        patch.last_publish_error = null;
        if (input.statusId === undefined && input.statusCategory === undefined) patch.status_id = (await defaultStatus(trx, auth.workspaceId, 'scheduled'))?.id ?? post.status_id;
        await upsertSlot(trx, { ...post, content_type: (patch.content_type as string) ?? post.content_type }, newSchedule);
        scheduleEvent = 'post.scheduled';
      } else if (newSchedule === null && (post.status === 'scheduled' || post.status === 'failed_to_publish' || post.scheduled_at)) {
        patch.status = 'draft';
        patch.scheduled_at = null;
        patch.schedule_version = post.schedule_version + 1;
        patch.delivery = null;
        if (input.statusId === undefined && input.statusCategory === undefined) patch.status_id = (await defaultStatus(trx, auth.workspaceId, 'draft'))?.id ?? post.status_id;
        await clearSlot(trx, post.id);
        scheduleEvent = 'post.unscheduled';
      }

      if (Object.keys(patch).length === 0) return { post, scheduleChanged: false };
      patch.updated_at = trx.fn.now();
      await trx('posts').where({ id: post.id }).update(patch);
      const updated = (await loadPostForUpdate(trx, auth.workspaceId, post.id))!;
      const data = { post: presentPost(updated) };
      await emitEvent(trx, { workspaceId: auth.workspaceId, projectId: updated.project_id, type: 'post.updated', data });
      if (scheduleEvent) await emitEvent(trx, { workspaceId: auth.workspaceId, projectId: updated.project_id, type: scheduleEvent, data });
      return { post: updated, scheduleChanged: scheduleEvent !== null };
    });
    if (result.scheduleChanged) await afterScheduleCommitted(result.post);
    return { data: presentPost(result.post) };
  },
});

