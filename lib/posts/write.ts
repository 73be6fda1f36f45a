import type { Knex } from 'knex';
import { deriveTitle } from '../llm/title';
import { newId } from '../ids';
import { emitEvents, type OutboxEvent } from '../outbox';
import { errors } from '../errors';
import { Post, PostStatus } from '../models';
import { boardMoved, combine, created, isNoChange, NO_CHANGE, planSchedule, scheduled, unscheduled, type PostChange } from './lifecycle';
import { mediaSet, type PostImage } from './media';
import { presentPost } from '../presenters/posts';
import type { PostRow } from './row';
import { hasScheduleColumns, wakesWorkflow, type ScheduleRow } from '../publishing/schedule';
import { turnSubquery } from '../publishing/turns';
import { db } from '../db';
import { approvalLost, assertReviewAllowsScheduling, reviewOf, reviewRequested } from './review';
import type { BoardStatus, StatusCategory } from './statuses';

// Writes shared by every door that creates or changes posts (REST, MCP, generation jobs).

export interface NewPost {
  workspaceId: string;
  projectId: string;
  content: string;
  title?: string;
  contentType: string;
  scheduledAt?: Date | null;
  /** A service-given title (spec 4.4 PATCH title) even though `title` is set: a generated draft's. */
  titleAuto?: boolean;
  /** The generation job that wrote it (unique: one draft per job). */
  generationJobId?: string;
  /** Its id, when the caller needs it before the insert (a generation job's result names it); a new one otherwise. */
  id?: string;
}

/**
 * spec 4.4 POST /v1/posts (and a generation job's draft): the lifecycle's `created` written as
 * one insert, with its slot and events in the caller's transaction. A post created scheduled
 * answers `scheduleChanged`, so `afterPostCommitted` (./afterCommit.ts) starts its workflow.
 * Given `events`, its events are added there instead, for the caller to append with its own in
 * one INSERT (emitEvents) before its COMMIT.
 */
export async function insertPost(trx: Knex.Transaction, p: NewPost, events?: OutboxEvent[]): Promise<Committed> {
  const change = created({ scheduledAt: p.scheduledAt ?? null });
  const id = p.id ?? newId('post');
  // One statement: the workspace's default board status of the post's category, the insert, and
  // the row as loadPostForUpdate reads it (status label, the workspace's review settings), with a
  // scheduled post's turn.
  const insert = asPostRow(
    trx
      .with(
        'st',
        PostStatus.forWorkspace(p.workspaceId, trx)
          .where({ category: change.board, is_default: true })
          .select('id', 'title', 'category')
          .limit(1)
          .toKnexQuery(),
      )
      .with(
        'ins',
        trx('posts')
          .insert({
            ...rowOf(change),
            id,
            workspace_id: p.workspaceId,
            project_id: p.projectId,
            status_id: trx.raw('(select id from st)'),
            title: p.title ?? '',
            title_auto: p.titleAuto ?? !p.title,
            ...(p.generationJobId ? { generation_job_id: p.generationJobId } : {}),
            content: p.content,
            content_type: p.contentType,
          })
          .returning('*'),
      ),
    'ins',
    'st',
  );
  // A post created on the schedule: its turn and its calendar slot, in the same statement.
  if (change.slot && change.slot !== 'clear') {
    withTurn(insert, 'ins');
    insert.with(
      'slot',
      slotUpsert(trx, { id, workspace_id: p.workspaceId, project_id: p.projectId, content_type: p.contentType }, change.slot.at),
    );
  }
  const post = (await insert) as PostRow;
  // docs/review.md: a new post has no approval, so a workspace that requires review refuses to
  // schedule it; the flag is read by the insert itself, and the refusal takes the insert back.
  if (change.scheduleChanged) assertReviewAllowsScheduling({ review: null }, post.require_review_workflow ?? false);
  const data = { post: presentPost(post) };
  const own = change.events.map((type): OutboxEvent => ({ workspaceId: p.workspaceId, projectId: p.projectId, type, data }));
  if (events) events.push(...own);
  else await emitEvents(trx, own);
  return { post, changed: true, scheduleChanged: change.scheduleChanged };
}

/** A post's one calendar slot (by post id), written or moved: a part of its write's WITH. */
function slotUpsert(trx: Knex.Transaction, post: Pick<PostRow, 'id' | 'workspace_id' | 'project_id' | 'content_type'>, date: Date) {
  return trx('calendar_slots')
    .insert({
      id: newId('slot'),
      workspace_id: post.workspace_id,
      project_id: post.project_id,
      date,
      content_type: post.content_type,
      post_id: post.id,
    })
    .onConflict('post_id')
    .merge({ date, content_type: post.content_type });
}

/** The post with its status label, locked for the rest of the transaction when asked. */
export async function loadPostForUpdate(
  trx: Knex | Knex.Transaction,
  workspaceId: string,
  postId: string,
  lock = false,
  opts: { includeDeleted?: boolean } = {},
): Promise<PostRow | undefined> {
  const q = Post.forWorkspace(workspaceId, trx)
    .alias('p')
    .leftJoin('post_statuses as s', 's.id', 'p.status_id')
    .join('workspaces as w', 'w.id', 'p.workspace_id')
    .leftJoin('projects as pj', 'pj.id', 'p.project_id')
    .where('p.id', postId)
    .select(
      'p.*',
      's.title as status_title',
      's.category as status_category',
      'w.require_review_workflow',
      'w.default_reviewer_user_id',
      'pj.timezone',
    )
    .first()
    .castTo<PostRow | undefined>();
  if (!opts.includeDeleted) q.whereNull('p.deleted_at');
  if (lock) q.onBuildKnex((k) => k.forUpdate('p'));
  return q;
}

export interface Committed {
  post: PostRow;
  changed: boolean;
  scheduleChanged: boolean;
  /** A review round started (docs/review.md): after the commit its workflow must be started. */
  reviewStarted?: boolean;
  /** The round was decided (docs/review.md "Deciding"): after the commit its workflow must hear of it. */
  reviewDecided?: boolean;
}

/** The columns of a change as the `posts` row stores them (its JSON blocks serialised). */
function rowOf(change: PostChange): Record<string, unknown> {
  const row: Record<string, unknown> = { ...change.set };
  for (const column of ['delivery', 'review', 'media'] as const) {
    const value = change.set[column];
    if (value !== undefined) row[column] = value === null ? null : JSON.stringify(value);
  }
  return row;
}

/**
 * The post's row updated with `row` and read back as loadPostForUpdate reads it (status label,
 * the workspace's review settings), in one statement. `board`: the post takes that category's
 * default board status of its workspace (lib/posts/statuses.ts defaultStatus), resolved in the
 * same statement; a workspace without one keeps the post's label.
 */
async function updateAndReload(
  trx: Knex.Transaction,
  post: Pick<PostRow, 'id' | 'workspace_id' | 'project_id'>,
  row: Record<string, unknown>,
  board: StatusCategory | undefined,
  also: { slot?: PostChange['slot']; contentType: string },
): Promise<PostRow> {
  const q = trx.queryBuilder();
  const set = { ...row };
  if (board !== undefined) {
    q.with(
      'st',
      PostStatus.forWorkspace(post.workspace_id, trx).where({ category: board, is_default: true }).select('id').limit(1).toKnexQuery(),
    );
    set.status_id = trx.raw('coalesce((select id from st), ??)', ['posts.status_id']);
  }
  const reload = asPostRow(q.with('upd', trx('posts').where({ id: post.id }).update(set).returning('*')), 'upd', 'post_statuses');
  // The calendar slot cleared, or moved with the post's new turn, in the same statement.
  if (also.slot === 'clear') reload.with('slot', trx('calendar_slots').where({ post_id: post.id }).delete());
  else if (also.slot) {
    withTurn(reload, 'upd');
    reload.with('slot', slotUpsert(trx, { ...post, content_type: also.contentType }, also.slot.at));
  }
  return (await reload) as PostRow;
}

/**
 * Writes one lifecycle change (./lifecycle.ts) to a post the caller holds in `trx`: the row
 * update (with the board's default status resolved), the calendar slot, the reload, and the
 * change's events in the outbox, all in the same transaction (ARCHITECTURE.md: the outbox
 * commits with the change). `eventData` adds fields to every event's payload. Nothing is
 * written for an empty change. After the commit the caller hands the result to
 * `afterPostCommitted` (./afterCommit.ts), which tells the post's workflows what changed.
 */
export async function commitChange(
  trx: Knex.Transaction,
  post: Pick<PostRow, 'id' | 'workspace_id' | 'project_id' | 'content_type'> &
    Partial<ScheduleRow & Pick<PostRow, 'workflow_synced_version'>>,
  given: PostChange,
  eventData: (post: PostRow) => Record<string, unknown> = () => ({}),
): Promise<Committed> {
  if (isNoChange(given) && given.events.length === 0) {
    return { post: (await loadPostForUpdate(trx, post.workspace_id, post.id))!, changed: false, scheduleChanged: false };
  }
  // A move its sleeping workflow will find when it wakes (lib/publishing/schedule.ts
  // wakesWorkflow) is not signalled: the workflow counts as told of the new version.
  const change =
    given.scheduleChanged && hasScheduleColumns(post) && !wakesWorkflow(post, given.set, Date.now())
      ? { ...given, set: { ...given.set, workflow_synced_version: given.set.schedule_version }, scheduleChanged: false }
      : given;
  const row = rowOf(change);
  const board = change.board !== undefined && change.set.status_id === undefined ? change.board : undefined;
  // The row update, the board's default status, the calendar slot and the reload are one
  // statement (a change that moves the slot always sets columns: ./lifecycle.ts).
  const written =
    Object.keys(row).length || board
      ? await updateAndReload(trx, post, row, board, { slot: change.slot, contentType: change.set.content_type ?? post.content_type })
      : undefined;
  const updated =
    written ??
    (await loadPostForUpdate(trx, post.workspace_id, post.id, false, {
      includeDeleted: change.set.deleted_at !== undefined,
    }))!;
  const data = { post: presentPost(updated), ...eventData(updated) };
  await emitEvents(
    trx,
    change.events.map((type) => ({ workspaceId: post.workspace_id, projectId: updated.project_id, type, data })),
  );
  return {
    post: updated,
    changed: true,
    scheduleChanged: change.scheduleChanged,
    reviewStarted: change.events.includes('post.review_requested'),
    reviewDecided: change.events.includes('post.approved') || change.events.includes('post.rejected'),
  };
}

export interface PostEdits {
  content?: string;
  title?: string;
  contentType?: string;
  autoLike?: boolean;
  autoComment?: boolean;
}

/**
 * docs/review.md "Edits after approval": what a reviewer approved is the content, the title and
 * the content type; an edit of any of them loses the approval (the engagement flags do not).
 */
export function touchesApproved(e: PostEdits): boolean {
  return e.content !== undefined || e.title !== undefined || e.contentType !== undefined;
}

/**
 * spec 4.4 PATCH fields that do not touch the lifecycle. Title: omit to keep a name; an empty
 * string clears it so that the service names the post again; a post with no name yet is named
 * from the opening line of new content.
 */
export function edited(post: Pick<PostRow, 'title' | 'title_auto' | 'content'>, e: PostEdits, now: Date): PostChange {
  const set: PostChange['set'] = {};
  if (e.content !== undefined) set.content = e.content;
  if (e.contentType !== undefined) set.content_type = e.contentType;
  if (e.autoLike !== undefined) set.auto_like = e.autoLike;
  if (e.autoComment !== undefined) set.auto_comment = e.autoComment;
  if (e.title !== undefined) {
    set.title = e.title;
    set.title_auto = e.title === '';
  }
  if ((set.title_auto ?? post.title_auto) && (set.title ?? post.title) === '' && e.content !== undefined)
    set.title = deriveTitle(e.content);
  if (Object.keys(set).length === 0) return NO_CHANGE;
  return { set: { ...set, updated_at: now }, events: [], scheduleChanged: false };
}

export interface PostUpdate {
  edits: PostEdits;
  /** The board status the caller picked (`statusId`, or the default of `statusCategory`). */
  status?: BoardStatus;
  /** A future instant, null to unschedule, undefined to leave the schedule alone. */
  scheduledFor?: Date | null;
  /** The connection was verified for scheduling before the transaction (spec 3.1). */
  verified: boolean;
}

/**
 * spec 4.4 PATCH under the post's row lock: edits, board status and schedule as one change,
 * written with `post.updated` and, when the schedule moves, `post.scheduled` / `post.unscheduled`.
 * Only `scheduledFor` moves the schedule (./lifecycle.ts planSchedule); the board status the
 * request names is a label that moves alone (`boardMoved`) and wins over the board move of the
 * schedule change it comes with (spec 3.1: "the workspace's default status in that category").
 */
export async function updatePost(
  trx: Knex.Transaction,
  workspaceId: string,
  postId: string,
  u: PostUpdate,
  now = new Date(),
): Promise<Committed> {
  const post = await loadPostForUpdate(trx, workspaceId, postId, true);
  if (!post) throw errors.notFound('post');
  const intent = planSchedule(post, u.scheduledFor);
  // The post moved between the check and the lock so that it now needs a verification it did not get.
  if (intent.kind === 'schedule' && !u.verified) {
    throw errors.conflict('The post changed while it was being updated; send the request again.', {
      reason: 'post_changed',
      retryable: true,
    });
  }
  // docs/review.md: an edit of what was approved loses the approval when the workspace requires
  // review; the gate then judges the post as the edit leaves it.
  const required = post.require_review_workflow ?? false;
  const lost = touchesApproved(u.edits) ? approvalLost(post, required, now) : NO_CHANGE;
  if (intent.kind === 'schedule') assertReviewAllowsScheduling(lost.set.review ? { review: lost.set.review } : post, required);
  const lifecycle =
    intent.kind === 'schedule' ? scheduled(post, intent.at, now) : intent.kind === 'unschedule' ? unscheduled(post, now) : NO_CHANGE;
  // Moving to the review category starts a round when the workspace names a default reviewer
  // (docs/review.md); a published post has nothing left to review, so there the label moves alone.
  const toReview =
    u.status?.category === 'review' &&
    post.default_reviewer_user_id &&
    post.status !== 'published' &&
    lost === NO_CHANGE &&
    reviewOf(post).state !== 'pending'
      ? reviewRequested({ ...post, ...lifecycle.set }, { reviewerUserId: post.default_reviewer_user_id, deadline: null, notes: null }, now)
      : NO_CHANGE;
  const change = combine(edited(post, u.edits, now), lifecycle, lost, toReview, u.status ? boardMoved(u.status.id, now) : NO_CHANGE);
  if (isNoChange(change)) return { post, changed: false, scheduleChanged: false };
  change.events = ['post.updated', ...change.events];
  return commitChange(trx, post, change);
}

/**
 * spec 4.4 PATCH /v1/posts/{postId}/media and an image job's attach (docs/media.md): the post's
 * images become `images`, written with `post.updated`, on a post the caller holds locked in `trx`.
 */
export async function setPostMedia(
  trx: Knex.Transaction,
  post: Pick<PostRow, 'id' | 'workspace_id' | 'project_id' | 'content_type'>,
  images: readonly PostImage[],
  now = new Date(),
): Promise<Committed> {
  return commitChange(trx, post, mediaSet(images, now));
}

/**
 * Adds the post's turn (lib/publishing/turns.ts) to the row a write's CTE (`cte`) returns, as
 * `publish_turn_ms`: the starter of its workflow then needs no read of its own.
 */
function withTurn(q: Knex.QueryBuilder, cte: string): Knex.QueryBuilder {
  const ref = (column: string) => db().raw('??', [`${cte}.${column}`]);
  const turn = turnSubquery({ workspaceId: ref('workspace_id'), scheduledAt: ref('scheduled_at'), id: ref('id') });
  return q.select(db().raw('(?) as publish_turn_ms', [turn]));
}

/**
 * The post row a write's CTE (`cte`, an INSERT or UPDATE … RETURNING *) left, as PostRow: its
 * board status (from `statuses`, the table or a CTE holding it), its workspace's review settings
 * and its project's timezone joined, in the same statement.
 */
function asPostRow(q: Knex.QueryBuilder, cte: string, statuses: string) {
  return q
    .from(cte)
    .join('workspaces as w', 'w.id', `${cte}.workspace_id`)
    .leftJoin('projects as pj', 'pj.id', `${cte}.project_id`)
    .leftJoin(`${statuses} as s`, 's.id', `${cte}.status_id`)
    .first(
      `${cte}.*`,
      's.title as status_title',
      's.category as status_category',
      'w.require_review_workflow',
      'w.default_reviewer_user_id',
      'pj.timezone',
    );
}
