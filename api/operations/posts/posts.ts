import { db, readPrepared, shapedRead, TIMESTAMPS_AS_ISO } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { Post, Project, reachParams, reachShape, reachValues, type Reach } from '../../../lib/models';
import { presentPost, presentPostSummary } from '../../../lib/presenters/posts';
import type { PostRow, PostSummaryRow } from '../../../lib/posts/row';
import { POST_SUMMARY_COLUMNS } from '../../../lib/posts/summaryColumns';
import { planSchedule } from '../../../lib/posts/lifecycle';
import { resolveStatus } from '../../../lib/posts/statuses';
import { afterPostCommitted } from '../../../lib/posts/afterCommit';
import { insertPost, touchesApproved, updatePost as writePostUpdate } from '../../../lib/posts/write';
import { parseInZone } from '../../../lib/time';
import type { AuthContext } from '../../auth/context';
import { page, single } from '../../output';
import { defineOperation, depsOf } from '../../operation';
import { keysetClauses, keysetPage, parseLimit } from '../../pagination';
import type { ProjectRow } from '../../../lib/presenters/projects';
import { findProject } from '../projects/queries';
import { createPostInput, getPostInput, listPostsInput, postSchema, postSummarySchema, updatePostInput } from './schema';
import { verifyConnectionForScheduling } from './scheduling';
import { assertReviewAllowsScheduling } from '../../../lib/posts/review';
import { requireProject } from '../projects/resolve';

/**
 * Creating or updating a post, either of which may schedule it (spec 3.1): 409 conflict when the
 * connection or the review gate refuses the schedule, 503 when the network cannot be reached to
 * verify the connection.
 */
const POST_WRITE = { scopes: { allOf: ['posts:write'] }, clientRole: 'deny', errors: ['conflict', 'temporarily_unavailable'] } as const;

/** The posts the caller reads (spec 5.4: a client-role account only the client view, lib/models/Post.ts). */
export function postsOf(auth: Reach & Pick<AuthContext, 'role'>) {
  return Post.readableBy(auth).whereNull('posts.deleted_at');
}

/** What the post list's SQL text depends on (GET /v1/posts): see `postsPageQuery`. */
export interface PostsPageShape {
  role: AuthContext['role'];
  projects: number | null;
  statuses: number | null;
  dateFrom: boolean;
  dateTo: boolean;
  cursor: boolean;
  limit: number;
}
type PostsPageParam = 'workspaceId' | 'projectIds' | 'projectId' | 'statuses' | 'dateFrom' | 'dateTo' | 'cursorCreatedAt' | 'cursorId';

/**
 * The post list's page (GET /v1/posts), by shape: the caller's role and number of assigned
 * projects (null: every project), which filters are set (and how many statuses), whether a
 * cursor positions it, the page size. Exported for bench/posts-list.ts, which times and runs
 * this very builder.
 */
export function postsPageQuery(shape: PostsPageShape, param: (name: PostsPageParam, index?: number) => string) {
  const q = postsOf({ ...reachParams(shape.projects, param), role: shape.role })
    .where('posts.project_id', param('projectId'))
    .select(...POST_SUMMARY_COLUMNS)
    .toKnexQuery();
  if (shape.statuses !== null)
    q.whereIn(
      'posts.status',
      Array.from({ length: shape.statuses }, (_, i) => param('statuses', i)),
    );
  if (shape.dateFrom) q.where('posts.created_at', '>=', param('dateFrom'));
  if (shape.dateTo) q.where('posts.created_at', '<', param('dateTo'));
  const pos = shape.cursor ? { createdAt: param('cursorCreatedAt'), id: param('cursorId') } : null;
  return keysetClauses(q, pos, shape.limit, 'posts');
}
const postsPage = shapedRead(postsPageQuery);

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
  input: listPostsInput,
  output: page(postSummarySchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit);
    const statuses = input.status?.split(',').map((s) => s.trim());
    const filters = {
      projectId: input.projectId,
      status: statuses?.slice().sort().join(','),
      dateFrom: input.dateFrom,
      dateTo: input.dateTo,
      role: auth.role,
    };
    const dateTo = input.dateTo ? new Date(Date.parse(`${input.dateTo}T00:00:00Z`) + 86_400_000) : undefined;
    const page = await keysetPage<PostSummaryRow, ReturnType<typeof presentPostSummary>>(
      // The most frequent read (bench/posts-list.ts): its SQL compiled once per shape, read as a
      // prepared statement, and the page's instants as ISO strings cut from Postgres' text
      // rather than Dates formatted back.
      (pos) =>
        readPrepared(
          postsPage(
            {
              role: auth.role,
              projects: reachShape(auth),
              statuses: statuses?.length ?? null,
              dateFrom: input.dateFrom !== undefined,
              dateTo: dateTo !== undefined,
              cursor: pos !== null,
              limit,
            },
            {
              ...reachValues(auth),
              projectId: input.projectId,
              statuses,
              dateFrom: input.dateFrom && `${input.dateFrom}T00:00:00Z`,
              dateTo,
              cursorCreatedAt: pos?.createdAt,
              cursorId: pos?.id,
            },
          ),
          { types: TIMESTAMPS_AS_ISO },
        ),
      { limit, cursor: input.cursor, filters, table: 'posts', present: presentPostSummary },
    );
    // Rows prove the project is the caller's (the query is scoped); only an empty page needs
    // the lookup that tells "no posts" from "no such project" (404) — one query saved per page.
    if (page.data.length === 0 && !(await Project.activeFor(auth).findById(input.projectId).select('projects.id')))
      throw errors.notFound('project');
    return page;
  },
});

export const getPost = defineOperation({
  name: 'posts.get',
  summary: 'One post.',
  kind: 'read',
  scopes: { allOf: ['posts:read'] },
  clientRole: 'narrow',
  input: getPostInput,
  output: single(postSummarySchema),
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
  ...POST_WRITE,
  input: createPostInput,
  output: single(postSchema),
  handler: async ({ auth }, input) => {
    const project = await requireProject(auth, input.projectId);
    // spec 3.1: the network token is not checked at create time.
    const scheduledAt = input.scheduledFor !== undefined ? futureInstant(input.scheduledFor, project) : null;
    // docs/review.md: the review gate is insertPost's (a new post has no approval to schedule with).
    const committed = await db().transaction((trx) =>
      insertPost(trx, {
        workspaceId: auth.workspaceId,
        projectId: project.id,
        content: input.content ?? ' ',
        title: input.title,
        contentType: input.contentType ?? 'PERSONAL',
        scheduledAt,
      }),
    );
    await afterPostCommitted(committed);
    return { data: presentPost(committed.post) };
  },
});

export const updatePost = defineOperation({
  name: 'posts.update',
  summary: 'Partial update: content, name, type, board status, schedule and engagement flags.',
  kind: 'write',
  ...POST_WRITE,
  input: updatePostInput,
  output: single(postSchema),
  handler: async (ctx, input) => {
    const { auth } = ctx;
    // With the workspace's review flag (spec 2.4 requireReviewWorkflow) for the gate below.
    const existing = (await postsOf(auth)
      .join('workspaces as w', 'w.id', 'posts.workspace_id')
      .where('posts.id', input.postId)
      .select(
        'posts.id',
        'posts.project_id',
        'posts.status',
        'posts.scheduled_at',
        'posts.schedule_version',
        'posts.review',
        'w.require_review_workflow',
      )
      .first()) as PostRow | undefined;
    if (!existing) throw errors.notFound('post');
    const project = existing.project_id ? await findProject(auth, existing.project_id) : undefined;
    const status = await resolveStatus(db(), auth.workspaceId, input);
    let scheduledFor: Date | null | undefined = input.scheduledFor === null ? null : undefined;
    if (typeof input.scheduledFor === 'string') {
      if (!project) throw errors.unprocessable('This post has no project to publish to.');
      scheduledFor = futureInstant(input.scheduledFor, project);
    }
    // spec 3.1: only `scheduledFor` touches the schedule (a board status is a label); scheduling
    // verifies the connection before anything changes, so a refusal leaves the post untouched.
    const intent = planSchedule(existing, scheduledFor);
    if (intent.kind === 'schedule') {
      if (!project) throw errors.unprocessable('This post has no project to publish to.');
      // docs/review.md: the review gate refuses before the live connection check (and again under the lock).
      if (!touchesApproved(input)) assertReviewAllowsScheduling(existing, existing.require_review_workflow ?? false);
      await verifyConnectionForScheduling(depsOf(ctx).network, project);
    }
    const { contentType, content, title, autoLike, autoComment } = input;
    const result = await db().transaction((trx) =>
      writePostUpdate(trx, auth.workspaceId, input.postId, {
        edits: { content, title, contentType, autoLike, autoComment },
        status,
        scheduledFor,
        verified: intent.kind === 'schedule',
      }),
    );
    await afterPostCommitted(result);
    return { data: presentPost(result.post) };
  },
});
