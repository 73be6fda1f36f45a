import assert from 'node:assert/strict';
import { publishStartDelayMs } from '../../lib/temporal/start/publishPost';
import type { ScheduleSnapshot } from '../../lib/publishing/schedule';

// lib/temporal/start/publishPost.ts: a new publish workflow is held by the server until its fire time.

const snap = (over: Partial<ScheduleSnapshot> = {}): ScheduleSnapshot => ({
  status: 'scheduled',
  version: 1,
  scheduledAtMs: 1_000_000,
  delaySeconds: 120,
  retryWindowSeconds: 3600,
  retryBaseSeconds: 5,
  ...over,
});

describe('lib/temporal/start/publishPost publishStartDelayMs', () => {
  it('holds a scheduled post until scheduledAt + the publish delay', () => {
    assert.equal(publishStartDelayMs(snap(), 1_000_000), 120_000);
    assert.equal(publishStartDelayMs(snap({ delaySeconds: 0 }), 999_000), 1_000);
  });

  it('rounds up, so the first task never starts before the fire time', () => {
    assert.equal(publishStartDelayMs(snap({ delaySeconds: 0 }), 999_999.4), 1);
  });

  it('starts at once when due, not scheduled, or without a snapshot', () => {
    assert.equal(publishStartDelayMs(snap({ delaySeconds: 0 }), 1_000_000), 0);
    assert.equal(publishStartDelayMs(snap({ delaySeconds: 0 }), 2_000_000), 0);
    assert.equal(publishStartDelayMs(snap({ status: 'draft' }), 0), 0);
    assert.equal(publishStartDelayMs(snap({ scheduledAtMs: null }), 0), 0);
    assert.equal(publishStartDelayMs(null, 0), 0);
    assert.equal(publishStartDelayMs(undefined, 0), 0);
  });

  it("adds the post's turn among its workspace's posts of that instant", () => {
    assert.equal(publishStartDelayMs(snap({ turnMs: 7 }), 1_000_000), 120_007);
    assert.equal(publishStartDelayMs(snap({ delaySeconds: 0, turnMs: 5 }), 1_000_003), 2, 'a due post still waits out its turn');
  });
});
