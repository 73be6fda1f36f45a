import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { wakesWorkflow } from '../../lib/publishing/schedule';

// lib/publishing/schedule.ts wakesWorkflow: which schedule changes signal a sleeping publish
// workflow now, and which it finds when it wakes at the time it was armed for.

describe('lib/publishing/schedule wakesWorkflow', () => {
  const now = Date.parse('2031-06-02T08:00:00Z');
  const at = new Date(now + 3_600_000); // fire time an hour away (the suite's publish delay is 0)
  const sleeping = { status: 'scheduled', schedule_version: 3, workflow_synced_version: 3, scheduled_at: at };
  const lead = config.publish.leaveAsleepLeadMs;
  const spread = config.publish.turnSpreadMs;
  const later = (ms: number) => ({ status: 'scheduled', scheduled_at: new Date(at.getTime() + ms) });

  it('leaves it asleep for a move later by more than a turn, an unschedule and a delete', () => {
    assert.equal(wakesWorkflow(sleeping, later(spread), now), false);
    assert.equal(wakesWorkflow(sleeping, later(7 * 86_400_000), now), false);
    assert.equal(wakesWorkflow(sleeping, { status: 'draft', scheduled_at: null }, now), false);
    assert.equal(wakesWorkflow(sleeping, { deleted_at: new Date(now) }, now), false);
  });

  it('wakes it for a move earlier, or later by less than a turn (its own turn may be later than the new time)', () => {
    assert.equal(wakesWorkflow(sleeping, later(-60_000), now), true);
    assert.equal(wakesWorkflow(sleeping, later(spread - 1), now), true);
  });

  it('wakes a workflow that never heard of the version before, and one without the version read', () => {
    assert.equal(wakesWorkflow({ ...sleeping, workflow_synced_version: 2 }, later(86_400_000), now), true);
    assert.equal(wakesWorkflow({ ...sleeping, workflow_synced_version: undefined }, later(86_400_000), now), true);
  });

  it('wakes a workflow whose fire time is within the lead: it may be firing, or retrying after a failed attempt', () => {
    const soon = { ...sleeping, scheduled_at: new Date(now + lead - 1) };
    assert.equal(wakesWorkflow(soon, { status: 'draft', scheduled_at: null }, now), true);
    assert.equal(wakesWorkflow({ ...sleeping, scheduled_at: new Date(now + lead) }, { status: 'draft', scheduled_at: null }, now), false);
    const past = { ...sleeping, scheduled_at: new Date(now - 1_000) };
    assert.equal(wakesWorkflow(past, later(86_400_000), now), true);
  });

  it('wakes what was not asleep on a schedule (a draft scheduled again)', () => {
    assert.equal(wakesWorkflow({ ...sleeping, status: 'draft', scheduled_at: null }, later(0), now), true);
  });
});
