import assert from 'node:assert/strict';
import { ApiError } from '../../lib/errors';
import {
  approvalLost,
  heldForReview,
  reviewBlocker,
  reviewDecided,
  reviewOverdue,
  reviewRequested,
  type ReviewRow,
} from '../../lib/posts/review';
import { unscheduled } from '../../lib/posts/lifecycle';

// The review transitions of docs/review.md, one rule at a time (lib/posts/review.ts).

const NOW = new Date('2026-11-25T12:00:00Z');
const draft: ReviewRow = { status: 'draft', scheduled_at: null, schedule_version: 0, review: null, review_round: 0 };
const scheduledPost: ReviewRow = {
  status: 'scheduled',
  scheduled_at: new Date('2026-12-01T09:00:00Z'),
  schedule_version: 3,
  review: null,
  review_round: 0,
};
const request = { reviewerUserId: 'user_r', deadline: new Date('2026-11-26T12:00:00Z'), notes: 'check' };

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return (err.details as { reason?: string } | undefined)?.reason;
  }
  assert.fail('expected a refusal');
}

describe('review transitions (docs/review.md)', () => {
  it('a request opens a round: waitingApproval in the review board off the schedule, the schedule kept on it', () => {
    const off = reviewRequested(draft, request, NOW);
    assert.equal(off.set.status, 'waitingApproval');
    assert.equal(off.board, 'review');
    assert.equal(off.set.review_round, 1);
    assert.deepEqual(off.events, ['post.review_requested']);
    assert.equal(off.set.review!.state, 'pending');
    assert.equal(off.set.review!.awaitingDecision, true);
    assert.equal(off.set.review!.deadline, request.deadline.toISOString());
    const on = reviewRequested(scheduledPost, request, NOW);
    assert.equal(on.set.status, undefined);
    assert.equal(on.board, undefined);
    assert.equal(on.scheduleChanged, false);
  });

  it('refuses a second request while pending, and any request on a published post', () => {
    const pending = { ...draft, review: reviewRequested(draft, request, NOW).set.review!, review_round: 1 };
    assert.equal(
      reasonOf(() => reviewRequested(pending, request, NOW)),
      'review_pending',
    );
    assert.equal(
      reasonOf(() => reviewRequested({ ...draft, status: 'published' }, request, NOW)),
      'already_published',
    );
  });

  it('a decision is final for its round', () => {
    const pending = { ...draft, status: 'waitingApproval', review: reviewRequested(draft, request, NOW).set.review!, review_round: 1 };
    const approved = reviewDecided(pending, 'approved', 'ok', NOW);
    assert.equal(approved.set.status, 'approved');
    assert.equal(approved.set.review!.state, 'approved');
    assert.equal(approved.set.review!.decidedAt, NOW.toISOString());
    assert.equal(approved.set.review!.notes, 'ok');
    assert.deepEqual(approved.events, ['post.approved']);
    const after = { ...pending, status: 'approved', review: approved.set.review! };
    assert.equal(
      reasonOf(() => reviewDecided(after, 'rejected', null, NOW)),
      'no_review_pending',
    );
    assert.equal(
      reasonOf(() => reviewDecided(draft, 'approved', null, NOW)),
      'no_review_pending',
    );
    assert.equal(reviewDecided(pending, 'rejected', null, NOW).set.review!.notes, 'check', 'the request notes stay without decision notes');
  });

  it('a rejection takes a post on the schedule off it at once; an approval keeps it (issue 29 item 8)', () => {
    const round = reviewRequested(scheduledPost, request, NOW).set.review!;
    const pendingOnSchedule = { ...scheduledPost, review: round, review_round: 1 };
    const rejected = reviewDecided(pendingOnSchedule, 'rejected', 'no', NOW);
    assert.equal(rejected.set.status, 'rejected');
    assert.equal(rejected.set.scheduled_at, null);
    assert.equal(rejected.set.schedule_version, 4, 'the publish workflow hears of it');
    assert.equal(rejected.set.delivery!.state, 'not_scheduled');
    assert.equal(rejected.set.review!.state, 'rejected');
    assert.equal(rejected.slot, 'clear');
    assert.equal(rejected.board, 'review');
    assert.deepEqual(rejected.events, ['post.rejected', 'post.unscheduled']);
    assert.equal(rejected.scheduleChanged, true);

    const failedWithSlot = { ...pendingOnSchedule, status: 'failed_to_publish' };
    assert.equal(reviewDecided(failedWithSlot, 'rejected', null, NOW).set.scheduled_at, null, 'a failed post holding its slot too');

    const approved = reviewDecided(pendingOnSchedule, 'approved', null, NOW);
    assert.equal(approved.set.status, undefined, 'still scheduled');
    assert.equal(approved.set.schedule_version, undefined);
    assert.equal(approved.scheduleChanged, false);
    assert.deepEqual(approved.events, ['post.approved']);

    const offSchedule = reviewDecided({ ...draft, status: 'waitingApproval', review: round, review_round: 1 }, 'rejected', null, NOW);
    assert.equal(offSchedule.scheduleChanged, false);
    assert.deepEqual(offSchedule.events, ['post.rejected']);
  });

  it('overdue once, only for the current pending round, never deciding', () => {
    const pending = { ...draft, review: reviewRequested(draft, request, NOW).set.review!, review_round: 2 };
    const overdue = reviewOverdue(pending, 2, NOW);
    assert.equal(overdue.set.review!.overdue, true);
    assert.equal(overdue.set.review!.state, 'pending');
    assert.deepEqual(overdue.events, ['post.review_overdue']);
    assert.deepEqual(reviewOverdue(pending, 1, NOW).events, []);
    assert.deepEqual(reviewOverdue({ ...pending, review: overdue.set.review! }, 2, NOW).events, []);
  });

  it('an approval is lost by an edit only when the workspace requires review', () => {
    const approved = { ...draft, status: 'approved', review: { state: 'approved', reviewerUserId: 'user_r' }, review_round: 1 };
    assert.deepEqual(approvalLost(approved, false, NOW).events, []);
    const lost = approvalLost(approved, true, NOW);
    assert.equal(lost.set.review!.state, 'pending');
    assert.equal(lost.set.review!.reviewerUserId, 'user_r');
    assert.equal(lost.set.review_round, 2);
    assert.equal(lost.set.status, 'waitingApproval');
  });

  it('one blocker rule for scheduling and publishing', () => {
    assert.equal(reviewBlocker({ review: null }, false), null);
    assert.equal(reviewBlocker({ review: null }, true), 'review_required');
    assert.equal(reviewBlocker({ review: { state: 'pending' } }, false), 'review_pending');
    assert.equal(reviewBlocker({ review: { state: 'rejected' } }, false), 'review_rejected');
    assert.equal(reviewBlocker({ review: { state: 'approved' } }, true), null);
  });

  it('held at publish time: back to review, off the schedule, the version moved', () => {
    const held = heldForReview(scheduledPost, 'review_pending', NOW);
    assert.equal(held.set.status, 'waitingApproval');
    assert.equal(held.set.scheduled_at, null);
    assert.equal(held.set.schedule_version, 4);
    assert.equal(held.slot, 'clear');
    assert.deepEqual(held.events, ['post.unscheduled']);
    assert.equal(held.scheduleChanged, true);
    // It is the lifecycle's unscheduled, shown in review: every column unscheduled writes, the same way.
    const off = unscheduled(scheduledPost, NOW);
    for (const column of ['scheduled_at', 'schedule_version', 'updated_at'] as const) assert.deepEqual(held.set[column], off.set[column]);
    assert.equal(held.set.delivery?.state, 'not_scheduled');
    assert.equal(held.set.last_publish_error, 'review_pending');
    assert.equal(held.board, 'review');
  });
});

describe('funnelStage (docs/engagement.md)', () => {
  it('follows the content type; a stored value wins', async () => {
    const { funnelStageOf } = await import('../../lib/posts/row');
    assert.deepEqual(
      ['PERSONAL', 'UNKNOWN', 'INSPIRATIONAL', 'NEWS', 'EDUCATIONAL', 'BUSINESS_INTERNAL', 'BUSINESS_EXTERNAL', 'BUSINESS'].map(
        funnelStageOf,
      ),
      ['REACH', 'REACH', 'REACH', 'REACH', 'TRUST', 'TRUST', 'CONVERT', 'CONVERT'],
    );
  });
});
