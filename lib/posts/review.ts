import { errors } from '../errors';
import { combine, delivery, NO_CHANGE, onSchedule, alreadyPublished, unscheduled, type LifecycleRow, type PostChange } from './lifecycle';

// Review before publishing (docs/review.md; spec 2.4 requireReviewWorkflow, 2.7 `review`,
// 3.1 waitingApproval / approved / rejected, whose transitions the spec leaves open). Pure
// transitions like ./lifecycle.ts: the post as it is in, the row change out; `commitChange`
// (./write.ts) writes them with their events.

export type ReviewState = 'not_requested' | 'pending' | 'approved' | 'rejected';

/** spec 2.7 `Post.review` as stored (requiredByWorkspace is the workspace's, added when presented). */
export interface ReviewBlock {
  state: ReviewState;
  awaitingDecision: boolean;
  reviewerUserId: string | null;
  deadline: string | null;
  overdue: boolean;
  decidedAt: string | null;
  notes: string | null;
  detail: string | null;
}

export const NOT_REQUESTED: ReviewBlock = Object.freeze({
  state: 'not_requested',
  awaitingDecision: false,
  reviewerUserId: null,
  deadline: null,
  overdue: false,
  decidedAt: null,
  notes: null,
  detail: null,
}) as ReviewBlock;

/** The part of a post row the review transitions read. */
export interface ReviewRow extends LifecycleRow {
  review: Partial<ReviewBlock> | Record<string, unknown> | null;
  review_round?: number;
}

export function reviewOf(post: Pick<ReviewRow, 'review'>): ReviewBlock {
  return { ...NOT_REQUESTED, ...((post.review ?? {}) as Partial<ReviewBlock>) };
}

export interface ReviewRequest {
  reviewerUserId: string | null;
  deadline: Date | null;
  notes: string | null;
}

/**
 * A new review round (docs/review.md "Requesting"). A post off the schedule shows
 * `waitingApproval` in the review board category; a post on the schedule keeps its schedule,
 * and the publish step holds it until the round is approved. A round awaiting a decision is
 * not replaced (409 `review_pending`): its reviewer decides it first.
 */
export function reviewRequested(post: ReviewRow, input: ReviewRequest, now: Date, why?: string): PostChange {
  if (post.status === 'published') throw alreadyPublished();
  if (reviewOf(post).state === 'pending') {
    throw errors.conflict('This post is already awaiting a review decision; the reviewer decides that round first.', {
      reason: 'review_pending',
      retryable: false,
    });
  }
  const review: ReviewBlock = {
    state: 'pending',
    awaitingDecision: true,
    reviewerUserId: input.reviewerUserId,
    deadline: input.deadline?.toISOString() ?? null,
    overdue: false,
    decidedAt: null,
    notes: input.notes,
    detail: why ?? (input.reviewerUserId ? `Awaiting a decision by ${input.reviewerUserId}.` : 'Awaiting a decision by a workspace admin.'),
  };
  const offSchedule = !onSchedule(post);
  return {
    set: { review, review_round: (post.review_round ?? 0) + 1, updated_at: now, ...(offSchedule ? { status: 'waitingApproval' } : {}) },
    ...(offSchedule ? { board: 'review' as const } : {}),
    events: ['post.review_requested'],
    scheduleChanged: false,
  };
}

/**
 * The reviewer's decision: final for the round (a second decision is 409 `no_review_pending`).
 * A post off the schedule takes the legacy status `approved` / `rejected` (spec 3.1) and stays
 * in its board status. An approval of a scheduled post lets it publish. A rejection of a post
 * on the schedule takes it off at once through the lifecycle (`unscheduled`: slot cleared,
 * version moved, `post.unscheduled`), so `status`, `scheduledAt` and the calendar say it will
 * not publish, rather than holding it until publish time (docs/review.md "Deciding").
 */
export function reviewDecided(post: ReviewRow, decision: 'approved' | 'rejected', notes: string | null, now: Date): PostChange {
  const current = reviewOf(post);
  if (current.state !== 'pending') {
    throw errors.conflict(
      current.state === 'not_requested'
        ? 'No review was requested for this post.'
        : `This review round was already decided (${current.state}); a decision is final for its round. Request a new review to decide again.`,
      { reason: 'no_review_pending', retryable: false },
    );
  }
  const review: ReviewBlock = {
    ...current,
    state: decision,
    awaitingDecision: false,
    decidedAt: now.toISOString(),
    notes: notes ?? current.notes,
    detail:
      decision === 'approved' ? 'Approved; the post may be scheduled and published.' : 'Rejected; edit the post and request a new review.',
  };
  const offSchedule = !onSchedule(post);
  const decided: PostChange = {
    set: { review, updated_at: now, ...(offSchedule && post.status === 'waitingApproval' ? { status: decision } : {}) },
    events: [decision === 'approved' ? 'post.approved' : 'post.rejected'],
    scheduleChanged: false,
  };
  if (decision === 'approved' || offSchedule || post.status === 'published') return decided;
  return combine(decided, unscheduled(post, now), {
    set: {
      status: 'rejected',
      delivery: delivery('not_scheduled', { detail: 'Not published: rejected in review; edit the post and request a new review.' }),
    },
    board: 'review',
    events: [],
    scheduleChanged: false,
  });
}

/** The round's deadline passed without a decision: `overdue`, and a reminder event. Never approves. */
export function reviewOverdue(post: ReviewRow, round: number, now: Date): PostChange {
  const current = reviewOf(post);
  if ((post.review_round ?? 0) !== round || current.state !== 'pending' || current.overdue) return NO_CHANGE;
  return {
    set: {
      review: { ...current, overdue: true, detail: `Overdue: the deadline ${current.deadline} passed without a decision.` },
      updated_at: now,
    },
    events: ['post.review_overdue'],
    scheduleChanged: false,
  };
}

/**
 * An edit of what was approved (content, title, content type) in a workspace that requires
 * review: the approval is lost and the post goes back to review with the same reviewer, as a
 * new round (docs/review.md "Edits after approval").
 */
export function approvalLost(post: ReviewRow, requiredByWorkspace: boolean, now: Date): PostChange {
  const current = reviewOf(post);
  if (!requiredByWorkspace || current.state !== 'approved') return NO_CHANGE;
  return reviewRequested(
    post,
    { reviewerUserId: current.reviewerUserId, deadline: null, notes: current.notes },
    now,
    'The post was edited after its approval; it needs a new decision.',
  );
}

/**
 * Why this post may not be scheduled or published now, or null (docs/review.md "The gate"):
 * a round awaiting a decision or rejected holds any post; with requireReviewWorkflow nothing
 * goes out that was not approved.
 */
export function reviewBlocker(
  post: Pick<ReviewRow, 'review'>,
  requiredByWorkspace: boolean,
): 'review_pending' | 'review_rejected' | 'review_required' | null {
  const { state } = reviewOf(post);
  if (state === 'pending') return 'review_pending';
  if (state === 'rejected') return 'review_rejected';
  if (requiredByWorkspace && state !== 'approved') return 'review_required';
  return null;
}

const GATE_MESSAGES = {
  review_pending: 'This post is awaiting a review decision; it can be scheduled once it is approved.',
  review_rejected: 'This post was rejected in review; edit it and request a new review before scheduling it.',
  review_required:
    'This workspace requires an approved review before a post is scheduled; request one with POST /v1/posts/{postId}/review.',
} as const;

/** spec 2.4 / 7.2: scheduling refused by the review gate is 409 conflict with details.reason. */
export function assertReviewAllowsScheduling(post: Pick<ReviewRow, 'review'>, requiredByWorkspace: boolean): void {
  const reason = reviewBlocker(post, requiredByWorkspace);
  if (reason) throw errors.conflict(GATE_MESSAGES[reason], { reason, retryable: false });
}

/**
 * The publish step's re-check (docs/review.md "Withdrawn before publish time"): a scheduled
 * post whose approval was withdrawn goes back to review, off the schedule, instead of
 * publishing: the lifecycle's `unscheduled` (version moved, slot cleared, `post.unscheduled`),
 * shown as waiting for approval in the review category.
 */
export function heldForReview(post: ReviewRow, reason: string, now: Date): PostChange {
  return combine(unscheduled(post, now), {
    set: {
      status: 'waitingApproval',
      delivery: delivery('not_scheduled', { detail: `Not published: ${GATE_MESSAGES[reason as keyof typeof GATE_MESSAGES] ?? reason}` }),
      last_publish_error: reason,
    },
    board: 'review',
    events: [],
    scheduleChanged: false,
  });
}
