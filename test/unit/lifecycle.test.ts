import assert from 'node:assert/strict';
import { ApiError } from '../../lib/errors';
import {
  boardMoved,
  combine,
  created,
  deleted,
  delivery,
  failed,
  isNoChange,
  planSchedule,
  published,
  retrying,
  scheduled,
  unscheduled,
  type LifecycleRow,
} from '../../lib/posts/lifecycle';
import { imagesOf, mediaSet } from '../../lib/posts/media';
import { touchesApproved } from '../../lib/posts/write';

// spec 3.1 / 2.7: the post lifecycle's pure transitions. Each test pins what one transition
// writes: status, schedule_version, delivery, board, slot, events and whether the publish
// workflow must hear of it.

const NOW = new Date('2026-06-01T12:00:00.000Z');
const LATER = new Date('2026-06-08T09:30:00.000Z');
const EARLIER = new Date('2026-05-20T09:30:00.000Z');

const draft: LifecycleRow = { status: 'draft', scheduled_at: null, schedule_version: 0 };
const onTheSchedule: LifecycleRow = { status: 'scheduled', scheduled_at: LATER, schedule_version: 3 };
const failedPost: LifecycleRow = { status: 'failed_to_publish', scheduled_at: EARLIER, schedule_version: 2 };
const livePost: LifecycleRow = { status: 'published', scheduled_at: EARLIER, schedule_version: 4 };

function refusal(fn: () => unknown, status: number, code: string, reason: string) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    assert.equal(err.details?.reason, reason);
    return true;
  });
}

describe('lib/posts/lifecycle', () => {
  it('delivery() fills the spec 2.7 block', () => {
    assert.deepEqual(delivery('not_scheduled'), { state: 'not_scheduled', willRetry: false, retryUntil: null, detail: null });
    assert.deepEqual(delivery('retrying', { willRetry: true, retryUntil: 'x', detail: 'y' }), {
      state: 'retrying',
      willRetry: true,
      retryUntil: 'x',
      detail: 'y',
    });
  });

  it('created: a draft off the schedule, or scheduled at version 1 with its slot; post.created first, workflow told only when scheduled', () => {
    const d = created({ scheduledAt: null });
    assert.deepEqual(d.set, { status: 'draft', scheduled_at: null, schedule_version: 0, delivery: delivery('not_scheduled') });
    assert.equal(d.board, 'draft');
    assert.equal(d.slot, undefined);
    assert.deepEqual(d.events, ['post.created']);
    assert.equal(d.scheduleChanged, false);
    const s = created({ scheduledAt: LATER });
    assert.deepEqual(s.set, { status: 'scheduled', scheduled_at: LATER, schedule_version: 1, delivery: delivery('scheduled') });
    assert.equal(s.board, 'scheduled');
    assert.deepEqual(s.slot, { at: LATER });
    assert.deepEqual(s.events, ['post.created', 'post.scheduled']);
    assert.equal(s.scheduleChanged, true);
  });

  it('mediaSet: the full list of images with post.updated, an empty list clears; schedule and review untouched', () => {
    const images = [{ key: 'a.png', alt: 'A', name: 'first' }];
    const c = mediaSet(images, NOW);
    assert.deepEqual(c.set, { media: { kind: 'images', images }, updated_at: NOW });
    assert.deepEqual(c.events, ['post.updated']);
    assert.equal(c.scheduleChanged, false);
    assert.equal(c.board, undefined);
    assert.equal(c.slot, undefined);
    assert.deepEqual(mediaSet([], NOW).set, { media: null, updated_at: NOW });
    assert.deepEqual(imagesOf({ media: c.set.media as unknown as Record<string, unknown> }), images);
    assert.deepEqual(imagesOf({ media: null }), []);
  });

  it('touchesApproved: content, title and type are what a reviewer approved; the engagement flags are not (docs/review.md)', () => {
    assert.equal(touchesApproved({ content: 'x' }), true);
    assert.equal(touchesApproved({ title: '' }), true);
    assert.equal(touchesApproved({ contentType: 'NEWS' }), true);
    assert.equal(touchesApproved({ autoLike: true, autoComment: false }), false);
    assert.equal(touchesApproved({}), false);
  });

  it('scheduled: status scheduled at the time, version bumped, delivery scheduled, slot set, post.scheduled, workflow told', () => {
    const c = scheduled(onTheSchedule, LATER, NOW);
    assert.deepEqual(c.set, {
      status: 'scheduled',
      scheduled_at: LATER,
      schedule_version: 4,
      delivery: delivery('scheduled'),
      last_publish_error: null,
      updated_at: NOW,
    });
    assert.equal(c.board, 'scheduled');
    assert.deepEqual(c.slot, { at: LATER });
    assert.deepEqual(c.events, ['post.scheduled']);
    assert.equal(c.scheduleChanged, true);
    assert.equal(scheduled(draft, LATER, NOW).set.schedule_version, 1);
    assert.equal(scheduled(failedPost, LATER, NOW).set.last_publish_error, null, 'a failed post rescheduled starts clean');
    refusal(() => scheduled(livePost, LATER, NOW), 422, 'unprocessable', 'already_published');
  });

  it('unscheduled: back to draft, version bumped, slot cleared, post.unscheduled; nothing for a post off the schedule', () => {
    const c = unscheduled(onTheSchedule, NOW);
    assert.deepEqual(c.set, {
      status: 'draft',
      scheduled_at: null,
      schedule_version: 4,
      delivery: delivery('not_scheduled'),
      updated_at: NOW,
    });
    assert.equal(c.board, 'draft');
    assert.equal(c.slot, 'clear');
    assert.deepEqual(c.events, ['post.unscheduled']);
    assert.equal(c.scheduleChanged, true);
    assert.equal(unscheduled(failedPost, NOW).set.status, 'draft', 'a failed post leaves the schedule too');
    assert.ok(isNoChange(unscheduled(draft, NOW)));
    assert.equal(unscheduled(draft, NOW).scheduleChanged, false);
    refusal(() => unscheduled(livePost, NOW), 422, 'unprocessable', 'already_published');
  });

  it('retrying: the attempt and error recorded, delivery retrying until the window closes, no version bump, no event', () => {
    const c = retrying(onTheSchedule, { error: 'timeout', retryUntil: LATER }, NOW);
    assert.equal(c.set.last_publish_attempt_at, NOW);
    assert.equal(c.set.last_publish_error, 'timeout');
    assert.equal(c.set.status, undefined, 'still scheduled');
    assert.equal(c.set.schedule_version, undefined, 'the workflow retrying must not find its own version stale');
    assert.deepEqual(
      { ...c.set.delivery, detail: undefined },
      { state: 'retrying', willRetry: true, retryUntil: LATER.toISOString(), detail: undefined },
    );
    assert.match(c.set.delivery!.detail!, /timeout/);
    assert.deepEqual(c.events, []);
    assert.equal(c.scheduleChanged, false);
  });

  it('published: status published with time and URN, error cleared, board published, delivery published, post.published', () => {
    const c = published(onTheSchedule, { postUrn: 'urn:li:share:1' }, NOW);
    assert.deepEqual(c.set, {
      status: 'published',
      published_at: NOW,
      network_post_urn: 'urn:li:share:1',
      last_publish_attempt_at: NOW,
      last_publish_error: null,
      delivery: delivery('published'),
      updated_at: NOW,
    });
    assert.equal(c.board, 'published');
    assert.deepEqual(c.events, ['post.published']);
    assert.equal(c.scheduleChanged, false);
    assert.equal(c.slot, undefined);
  });

  it('failed: failed_to_publish with the error, delivery failed and not retrying, post.publish_failed', () => {
    const c = failed(onTheSchedule, { error: 'token_refresh_failed', detail: 'Refused.' }, NOW);
    assert.deepEqual(c.set, {
      status: 'failed_to_publish',
      last_publish_error: 'token_refresh_failed',
      last_publish_attempt_at: NOW,
      updated_at: NOW,
      delivery: delivery('failed', { detail: 'Refused.' }),
    });
    assert.deepEqual(c.events, ['post.publish_failed']);
    assert.equal(c.scheduleChanged, false);
  });

  it('deleted: soft delete, slot cleared, post.deleted; a post on the schedule bumps its version, a published one does not', () => {
    const c = deleted(onTheSchedule, NOW);
    assert.deepEqual(c.set, { deleted_at: NOW, updated_at: NOW, schedule_version: 4 });
    assert.equal(c.slot, 'clear');
    assert.deepEqual(c.events, ['post.deleted']);
    assert.equal(c.scheduleChanged, true);
    assert.deepEqual(deleted(draft, NOW).set, { deleted_at: NOW, updated_at: NOW });
    assert.equal(deleted(draft, NOW).scheduleChanged, false);
    assert.equal(deleted(livePost, NOW).scheduleChanged, false, 'the network copy stays; nothing to cancel');
    assert.equal(deleted(failedPost, NOW).scheduleChanged, true);
  });

  it('boardMoved: the label alone, on any post; no lifecycle column, no event, no workflow signal (spec 3.1)', () => {
    const c = boardMoved('st_1', NOW);
    assert.deepEqual(c.set, { status_id: 'st_1', updated_at: NOW });
    assert.equal(c.board, undefined);
    assert.equal(c.slot, undefined);
    assert.deepEqual(c.events, []);
    assert.equal(c.scheduleChanged, false);
  });

  it('combine: later columns win, events in order without repeats, scheduleChanged if any', () => {
    const c = combine(
      { set: { content: 'x', updated_at: EARLIER }, events: ['post.updated'], scheduleChanged: false },
      scheduled(draft, LATER, NOW),
      { set: { status_id: 'st_9' }, events: ['post.updated'], scheduleChanged: false },
    );
    assert.equal(c.set.content, 'x');
    assert.equal(c.set.updated_at, NOW);
    assert.equal(c.set.status_id, 'st_9');
    assert.equal(c.board, 'scheduled');
    assert.deepEqual(c.events, ['post.updated', 'post.scheduled']);
    assert.equal(c.scheduleChanged, true);
  });

  describe('planSchedule (PATCH: only scheduledFor moves the schedule, spec 3.1)', () => {
    it('a future scheduledFor schedules; null unschedules a post on the schedule; omitted leaves it', () => {
      assert.deepEqual(planSchedule(draft, LATER), { kind: 'schedule', at: LATER });
      assert.deepEqual(planSchedule(onTheSchedule, LATER), { kind: 'schedule', at: LATER });
      assert.deepEqual(planSchedule(failedPost, LATER), { kind: 'schedule', at: LATER });
      assert.deepEqual(planSchedule(onTheSchedule, null), { kind: 'unschedule' });
      assert.deepEqual(planSchedule(failedPost, null), { kind: 'unschedule' });
      assert.deepEqual(planSchedule(draft, null), { kind: 'none' });
      for (const post of [draft, onTheSchedule, failedPost, livePost]) assert.deepEqual(planSchedule(post, undefined), { kind: 'none' });
    });

    it('a published post cannot be rescheduled or unscheduled: 422 already_published', () => {
      refusal(() => planSchedule(livePost, LATER), 422, 'unprocessable', 'already_published');
      refusal(() => planSchedule(livePost, null), 422, 'unprocessable', 'already_published');
    });
  });
});
