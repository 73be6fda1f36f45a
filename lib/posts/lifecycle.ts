import { ApiError, errors } from '../errors';
import type { PostColumns } from '../models';
import type { EventType } from '../outbox';
import type { PostMedia } from './media';
import type { ReviewBlock } from './review';
import type { StatusCategory } from './statuses';

// The post lifecycle of spec 3.1 in one place: pure functions from the post as it is to the row
// change a transition makes. They read no database and no clock (the caller passes `now`), so
// each is unit-tested on its own (test/unit/lifecycle.test.ts); `commitChange` in ./write.ts
// writes one (update, calendar slot, reload, events, all in the caller's transaction).
//
// Two rules hold for every transition:
//   - `schedule_version` moves exactly when what the publish workflow waits for changes
//     (scheduled, rescheduled, unscheduled, deleted while on the schedule); the workflow re-reads
//     the row on every version it hears of (docs/publishing.md).
//   - `delivery` (spec 2.7, one `Delivery` type built by `delivery()`) is written by the same
//     change that moves `status`, so the two never disagree.
//
// The board status (`statusId` / `statusCategory`) is the workspace's label, not part of the
// lifecycle: spec 3.1 moves it "any → the workspace's default status in that category" with no
// condition, so a board move (`boardMoved`) never schedules, unschedules or publishes. The
// transitions below still move the board on the service's own steps (`board`), as the
// dashboard does (docs/publishing.md, "Board status and lifecycle").

/** spec 2.7 `Post.delivery`. */
export type DeliveryState = 'not_scheduled' | 'scheduled' | 'retrying' | 'published' | 'failed';
export interface Delivery {
  state: DeliveryState;
  willRetry: boolean;
  retryUntil: string | null;
  detail: string | null;
}

export function delivery(state: DeliveryState, more: Partial<Omit<Delivery, 'state'>> = {}): Delivery {
  return { state, willRetry: more.willRetry ?? false, retryUntil: more.retryUntil ?? null, detail: more.detail ?? null };
}

/** The columns of `posts` (the model's) a lifecycle change may set, its JSON blocks with their lifecycle types. */
export type PostColumnUpdate = Partial<
  Omit<
    PostColumns,
    | 'id'
    | 'workspace_id'
    | 'project_id'
    | 'created_at'
    | 'delivery'
    | 'review'
    | 'media'
    | 'deleted_at'
    | 'workflow_synced_version'
    | 'generation_job_id'
    | 'review_synced_round'
  > & { delivery: Delivery; deleted_at: Date; review: ReviewBlock; media: PostMedia | null }
>;

export type PostEventType = Extract<EventType, `post.${string}`>;

/** One row change. Empty `set`, no board move and no slot change means "nothing happens". */
export interface PostChange {
  set: PostColumnUpdate;
  /** Move the board to the workspace's default status of this category, unless `set.status_id` names one. */
  board?: StatusCategory;
  /** The calendar slot follows the schedule. */
  slot?: { at: Date } | 'clear';
  /** Written to the outbox after the update, in this order, each with the post as it now reads. */
  events: PostEventType[];
  /** `schedule_version` moved: after the commit the post's publish workflow must hear of it. */
  scheduleChanged: boolean;
}

/** The part of a post row the transitions read. */
export type LifecycleRow = Pick<PostColumns, 'status' | 'scheduled_at' | 'schedule_version'>;

export const NO_CHANGE: PostChange = Object.freeze({ set: {}, events: [], scheduleChanged: false }) as PostChange;

export function isNoChange(c: PostChange): boolean {
  return Object.keys(c.set).length === 0 && c.board === undefined && c.slot === undefined;
}

/** On the schedule: waiting to publish, or failed at it and still holding its slot. */
export function onSchedule(p: Pick<LifecycleRow, 'status' | 'scheduled_at'>): boolean {
  return p.status === 'scheduled' || p.status === 'failed_to_publish' || p.scheduled_at !== null;
}

export function alreadyPublished(): ApiError {
  return errors.unprocessable('This post is already published; create a new post to publish again.', { reason: 'already_published' });
}

// --- the transitions -------------------------------------------------------------------------

/**
 * spec 3.1 (first row) and 4.4 POST /v1/posts: a new post is a `draft`, or `scheduled` when it
 * is created for a future instant (already validated, no connection check at create time). Its
 * first schedule is version 1, so the publish workflow started after the commit hears of it.
 */
export function created(input: { scheduledAt: Date | null; status?: 'draft' | 'scheduled' }): PostChange {
  if (!input.scheduledAt) {
    return {
      set: { status: input.status ?? 'draft', scheduled_at: null, schedule_version: 0, delivery: delivery('not_scheduled') },
      board: 'draft',
      events: ['post.created'],
      scheduleChanged: false,
    };
  }
  const at = input.scheduledAt;
  return {
    set: { status: 'scheduled', scheduled_at: at, schedule_version: 1, delivery: delivery('scheduled') },
    board: 'scheduled',
    slot: { at },
    events: ['post.created', 'post.scheduled'],
    scheduleChanged: true,
  };
}

/**
 * On or off the schedule: the version moves, so the publish workflow re-reads the row; the board
 * and the calendar slot follow.
 */
function scheduleMoved(post: LifecycleRow, at: Date | null, now: Date, more: PostColumnUpdate = {}): PostChange {
  return {
    set: {
      status: at ? 'scheduled' : 'draft',
      scheduled_at: at,
      schedule_version: post.schedule_version + 1,
      delivery: delivery(at ? 'scheduled' : 'not_scheduled'),
      ...more,
      updated_at: now,
    },
    board: at ? 'scheduled' : 'draft',
    slot: at ? { at } : 'clear',
    events: [at ? 'post.scheduled' : 'post.unscheduled'],
    scheduleChanged: true,
  };
}

/** spec 3.1: scheduled or rescheduled for `at` (already validated as future and verified). */
export function scheduled(post: LifecycleRow, at: Date, now: Date): PostChange {
  if (post.status === 'published') throw alreadyPublished();
  return scheduleMoved(post, at, now, { last_publish_error: null });
}

/** spec 3.1: off the schedule, back to `draft`. A post that is not on the schedule does not change. */
export function unscheduled(post: LifecycleRow, now: Date): PostChange {
  if (post.status === 'published') throw alreadyPublished();
  if (!onSchedule(post)) return NO_CHANGE;
  return scheduleMoved(post, null, now);
}

/** A transient failure at publish time: the workflow retries until `retryUntil` (docs/publishing.md). */
export function retrying(_post: LifecycleRow, input: { error: string; retryUntil: Date }, now: Date): PostChange {
  return {
    set: {
      last_publish_attempt_at: now,
      last_publish_error: input.error,
      delivery: delivery('retrying', {
        willRetry: true,
        retryUntil: input.retryUntil.toISOString(),
        detail: `The network did not accept the post yet (${input.error}); retrying.`,
      }),
    },
    events: [],
    scheduleChanged: false,
  };
}

/** spec 3.1: the scheduler published it. */
export function published(_post: LifecycleRow, input: { postUrn: string }, now: Date): PostChange {
  return {
    set: {
      status: 'published',
      published_at: now,
      network_post_urn: input.postUrn,
      last_publish_attempt_at: now,
      last_publish_error: null,
      delivery: delivery('published'),
      updated_at: now,
    },
    board: 'published',
    events: ['post.published'],
    scheduleChanged: false,
  };
}

/** spec 3.1: publishing failed for good (refused, token gone, or the retry window closed). */
export function failed(_post: LifecycleRow, input: { error: string; detail: string }, now: Date): PostChange {
  return {
    set: {
      status: 'failed_to_publish',
      last_publish_error: input.error,
      last_publish_attempt_at: now,
      updated_at: now,
      delivery: delivery('failed', { detail: input.detail }),
    },
    events: ['post.publish_failed'],
    scheduleChanged: false,
  };
}

/**
 * spec 3.1 (last row): removed. A post on the schedule bumps its version so that its workflow
 * re-reads the row and finds it gone; a published post keeps its network copy.
 */
export function deleted(post: LifecycleRow, now: Date): PostChange {
  const cancels = post.status !== 'published' && onSchedule(post);
  return {
    set: { deleted_at: now, updated_at: now, ...(cancels ? { schedule_version: post.schedule_version + 1 } : {}) },
    slot: 'clear',
    events: ['post.deleted'],
    scheduleChanged: cancels,
  };
}

/**
 * spec 3.1 "PATCH with statusCategory / statusId": the label moves to `statusId` and nothing
 * else does. `status`, `scheduledAt`, `delivery`, the slot and the publish workflow belong to
 * the lifecycle, which only `scheduledFor`, the scheduler, review decisions and delete move.
 */
export function boardMoved(statusId: string, now: Date): PostChange {
  return { set: { status_id: statusId, updated_at: now }, events: [], scheduleChanged: false };
}

/** Two changes made by one request: later columns win, events in order without repeats. */
export function combine(...changes: PostChange[]): PostChange {
  const out: PostChange = { set: {}, events: [], scheduleChanged: false };
  for (const c of changes) {
    Object.assign(out.set, c.set);
    if (c.board !== undefined) out.board = c.board;
    if (c.slot !== undefined) out.slot = c.slot;
    for (const e of c.events) if (!out.events.includes(e)) out.events.push(e);
    out.scheduleChanged ||= c.scheduleChanged;
  }
  return out;
}

// --- PATCH /v1/posts/{id}: what the request does to the schedule (spec 3.1, 4.4) ---------------

export type ScheduleIntent = { kind: 'schedule'; at: Date } | { kind: 'unschedule' } | { kind: 'none' };

/**
 * Only `scheduledFor` touches the schedule (spec 3.1, 4.4): a future instant schedules or
 * reschedules (through the verified path), `null` takes a post on the schedule off it, and
 * omitted leaves the schedule untouched, whatever board status the same request names. A
 * published post cannot be rescheduled or unscheduled (422 `already_published`).
 *
 * `scheduledFor` has been parsed (a Date in the future, null, or undefined when omitted).
 */
export function planSchedule(post: LifecycleRow, scheduledFor: Date | null | undefined): ScheduleIntent {
  if (scheduledFor === undefined) return { kind: 'none' };
  if (post.status === 'published') throw alreadyPublished();
  if (scheduledFor === null) return onSchedule(post) ? { kind: 'unschedule' } : { kind: 'none' };
  return { kind: 'schedule', at: scheduledFor };
}
