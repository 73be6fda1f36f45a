import assert from 'node:assert/strict';
import type { PublishOutcome, ScheduleSnapshot } from '../../activities/publishing';
import { publishPostWorkflow, publishStatusQuery, scheduleChangedSignal, type PublishStatus } from '../../workflows/publishPost';
import { maybeRecordTierHistory } from '../support/histories';
import { waitFor } from '../support/wait';
import { withWorker, type WorkflowTestContext } from '../support/workflowEnv';

// The publish workflow alone (workflows/publishPost.ts): the post row is a stub the test edits,
// and every answer is read through the workflow's own status query (spec 3.1 scheduling,
// 3.3 retries within the window). Real timers, kept to seconds (see support/workflowEnv.ts).

interface Stub {
  schedule: ScheduleSnapshot | null;
  publish: (attempt: number) => PublishOutcome;
  calls: Array<{ version: number; attempt: number; retryUntilMs: number; at: number }>;
  failed: Array<{ version: number; error: string }>;
  loads: number;
}

function stubActivities(stub: Stub) {
  return {
    async loadSchedule(): Promise<ScheduleSnapshot | null> {
      stub.loads++;
      return stub.schedule && { ...stub.schedule };
    },
    async publishPost(input: { postId: string; version: number; attempt: number; retryUntilMs: number }): Promise<PublishOutcome> {
      stub.calls.push({ version: input.version, attempt: input.attempt, retryUntilMs: input.retryUntilMs, at: Date.now() });
      return stub.publish(input.attempt);
    },
    async markPublishFailed(input: { postId: string; version: number; error: string }): Promise<boolean> {
      stub.failed.push({ version: input.version, error: input.error });
      return true;
    },
  };
}

const scheduled = (atMs: number, version: number, extra: Partial<ScheduleSnapshot> = {}): ScheduleSnapshot => ({
  status: 'scheduled',
  version,
  scheduledAtMs: atMs,
  delaySeconds: 0,
  retryWindowSeconds: 60,
  retryBaseSeconds: 1,
  ...extra,
});

function newStub(
  schedule: ScheduleSnapshot | null,
  publish: Stub['publish'] = () => ({ outcome: 'published', postUrn: 'urn:li:share:1', already: false }),
): Stub {
  return { schedule, publish, calls: [], failed: [], loads: 0 };
}

async function start(ctx: WorkflowTestContext, postId: string) {
  return ctx.client.workflow.start(publishPostWorkflow, {
    taskQueue: ctx.taskQueue,
    workflowId: `publish-${postId}-${ctx.taskQueue}`,
    args: [{ postId }],
  });
}

type Handle = Awaited<ReturnType<typeof start>>;

/** Polls the workflow's own status query until `ok` holds. */
function statusWhere(handle: Handle, ok: (s: PublishStatus) => boolean, what: string): Promise<PublishStatus> {
  return waitFor(
    async () => {
      const s = await handle.query(publishStatusQuery);
      return ok(s) && s;
    },
    20_000,
    what,
    50,
  );
}

describe('publish workflow (workflow tier: stubbed activities, own task queue)', function () {
  this.timeout(60_000);

  it('a reschedule to an earlier time moves the fire time: it publishes then, not at the old time', async () => {
    const oldAt = Date.now() + 60 * 60_000;
    const stub = newStub(scheduled(oldAt, 1));
    await withWorker(stubActivities(stub), async (ctx) => {
      const handle = await start(ctx, 'post_earlier');
      const before = await statusWhere(handle, (s) => s.state === 'waiting' && s.version === 1, 'waiting on version 1');
      assert.equal(before.fireAtMs, oldAt);
      const newAt = Date.now() + 1_500;
      stub.schedule = scheduled(newAt, 2);
      await handle.signal(scheduleChangedSignal, 2);
      const moved = await statusWhere(handle, (s) => s.version === 2, 'version 2');
      assert.equal(moved.fireAtMs, newAt, 'the timer follows the row');
      assert.deepEqual(await handle.result(), { outcome: 'published', postUrn: 'urn:li:share:1' });
      assert.equal(stub.calls.length, 1, 'published exactly once');
      assert.equal(stub.calls[0]!.version, 2);
      assert.ok(stub.calls[0]!.at >= newAt, 'not before the new time');
      assert.equal((await handle.query(publishStatusQuery)).state, 'done');
      await maybeRecordTierHistory(ctx, handle.workflowId, 'publishPost-rescheduled-earlier');
    });
  });

  it('a reschedule to a later time moves the fire time: nothing fires at the old time', async () => {
    // First armed an hour away, so that a worker slow to start on a loaded machine changes
    // nothing; then moved to the "old" time, 4 s away, and from there later.
    const stub = newStub(scheduled(Date.now() + 60 * 60_000, 1));
    await withWorker(stubActivities(stub), async (ctx) => {
      const handle = await start(ctx, 'post_later');
      await statusWhere(handle, (s) => s.state === 'waiting' && s.version === 1, 'waiting on version 1');
      const oldAt = Date.now() + 4_000;
      stub.schedule = scheduled(oldAt, 2);
      await handle.signal(scheduleChangedSignal, 2);
      await statusWhere(handle, (s) => s.state === 'waiting' && s.fireAtMs === oldAt, 'waiting for the old time');
      assert.ok(Date.now() < oldAt - 1_000, 'the later move is signalled before the old time');
      const newAt = oldAt + 2_000;
      stub.schedule = scheduled(newAt, 3);
      await handle.signal(scheduleChangedSignal, 3);
      const moved = await statusWhere(handle, (s) => s.version === 3, 'version 3');
      assert.equal(moved.fireAtMs, newAt);
      assert.equal(moved.state, 'waiting');
      await handle.result();
      assert.equal(stub.calls.length, 1);
      assert.equal(stub.calls[0]!.version, 3, 'the old version never published');
      assert.ok(stub.calls[0]!.at >= newAt, `fired at ${stub.calls[0]!.at}, before ${newAt}`);
    });
  });

  it('the schedule carried in the start input and the signal arms the timer without reading the row; an older snapshot is dropped', async () => {
    const oldAt = Date.now() + 60 * 60_000;
    // The row read would say "gone": any read ends the workflow without publishing.
    const stub = newStub(null);
    await withWorker(stubActivities(stub), async (ctx) => {
      const handle = await ctx.client.workflow.start(publishPostWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `publish-post_carried-${ctx.taskQueue}`,
        args: [{ postId: 'post_carried', schedule: scheduled(oldAt, 1) }],
      });
      const before = await statusWhere(handle, (s) => s.state === 'waiting' && s.version === 1, 'waiting on version 1');
      assert.equal(before.fireAtMs, oldAt);
      const newAt = Date.now() + 3_000;
      // A reschedule, then a snapshot of an older version arriving late (two API processes crossing).
      await handle.signal(scheduleChangedSignal, 3, { schedule: scheduled(newAt, 3) });
      await handle.signal(scheduleChangedSignal, 2, { schedule: scheduled(oldAt, 2) });
      assert.deepEqual(await handle.result(), { outcome: 'published', postUrn: 'urn:li:share:1' });
      assert.equal(stub.loads, 0, 'never read the row');
      assert.equal(stub.calls.length, 1, 'published exactly once');
      assert.equal(stub.calls[0]!.version, 3, 'the newest snapshot wins');
      assert.ok(stub.calls[0]!.at >= newAt, 'not before the new time');
      await maybeRecordTierHistory(ctx, handle.workflowId, 'publishPost-carried-rescheduled');
    });
  });

  it('a carried snapshot of a deleted post ends the workflow; a stale publish step reads the row', async () => {
    const stub = newStub(scheduled(Date.now() + 60 * 60_000, 5));
    stub.publish = () => ({ outcome: 'stale' });
    await withWorker(stubActivities(stub), async (ctx) => {
      // Carried version 4 is due now, but the row has moved on to version 5, an hour away.
      const handle = await ctx.client.workflow.start(publishPostWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `publish-post_stale-${ctx.taskQueue}`,
        args: [{ postId: 'post_stale', schedule: scheduled(Date.now(), 4) }],
      });
      const reread = await statusWhere(handle, (s) => s.state === 'waiting' && s.version === 5, 'the row read after stale');
      assert.equal(stub.calls.length, 1);
      assert.equal(stub.calls[0]!.version, 4);
      assert.equal(stub.loads, 1, 'read the row once, after the stale step');
      assert.ok(reread.fireAtMs! > Date.now() + 30 * 60_000);
      await handle.signal(scheduleChangedSignal, 6, { schedule: null });
      assert.deepEqual(await handle.result(), { outcome: 'not_scheduled' });
      assert.equal(stub.loads, 1, 'the deletion came with the signal');
      await maybeRecordTierHistory(ctx, handle.workflowId, 'publishPost-carried-stale-then-deleted');
    });
  });

  it('a stale step that hands back the row arms the next wait in the same task; a newer snapshot handed in meanwhile wins', async () => {
    const stub = newStub(null);
    const far = Date.now() + 60 * 60_000;
    let client: WorkflowTestContext['client'] | undefined;
    let queue = '';
    const activities = {
      ...stubActivities(stub),
      async publishPost(input: { postId: string; version: number; attempt: number; retryUntilMs: number }): Promise<PublishOutcome> {
        stub.calls.push({ version: input.version, attempt: input.attempt, retryUntilMs: input.retryUntilMs, at: Date.now() });
        // Moved later while asleep: the row as the lock found it, version 5, an hour away.
        if (input.postId === 'post_asleep') return { outcome: 'stale', schedule: scheduled(far, 5) };
        // A move to version 6 commits and is signalled while the step runs; the lock had found 5, due now.
        await client!.workflow
          .getHandle(`publish-post_newer-${queue}`)
          .signal(scheduleChangedSignal, 6, { schedule: scheduled(far + 1_000, 6) });
        return { outcome: 'stale', schedule: scheduled(Date.now(), 5) };
      },
    };
    await withWorker(activities, async (ctx) => {
      client = ctx.client;
      queue = ctx.taskQueue;
      const begin = (postId: string) =>
        ctx.client.workflow.start(publishPostWorkflow, {
          taskQueue: ctx.taskQueue,
          workflowId: `publish-${postId}-${ctx.taskQueue}`,
          args: [{ postId, schedule: scheduled(Date.now(), 4) }],
        });
      const asleep = await begin('post_asleep');
      const armed = await statusWhere(asleep, (s) => s.state === 'waiting' && s.version === 5, 'the handed-back row taken up');
      assert.equal(armed.fireAtMs, far);
      assert.equal(stub.loads, 0, 'no read of the row');
      const events = (await asleep.fetchHistory()).events ?? [];
      assert.equal(events.filter((e) => e.activityTaskScheduledEventAttributes).length, 0, 'no activity read the row');
      assert.equal(events.filter((e) => e.timerStartedEventAttributes).length, 1, 'the wait for version 5 armed');
      await maybeRecordTierHistory(ctx, asleep.workflowId, 'publishPost-stale-carries-row');

      const newer = await begin('post_newer');
      const kept = await statusWhere(newer, (s) => s.state === 'waiting' && s.version === 6, 'the newer snapshot kept');
      assert.equal(kept.fireAtMs, far + 1_000);
      assert.equal(stub.calls.filter((c) => c.version === 5).length, 0, 'the older row handed back never fired');
      assert.equal(stub.loads, 0);
      await Promise.all([asleep.terminate(), newer.terminate()]);
    });
  });

  it('unscheduling ends the workflow at once, without publishing', async () => {
    const stub = newStub(scheduled(Date.now() + 60 * 60_000, 1));
    await withWorker(stubActivities(stub), async (ctx) => {
      const handle = await start(ctx, 'post_unscheduled');
      await statusWhere(handle, (s) => s.state === 'waiting' && s.version === 1, 'waiting on version 1');
      stub.schedule = { ...stub.schedule!, status: 'draft', version: 2, scheduledAtMs: null };
      await handle.signal(scheduleChangedSignal, 2);
      assert.deepEqual(await handle.result(), { outcome: 'not_scheduled' });
      assert.equal((await handle.query(publishStatusQuery)).state, 'done');
      assert.equal(stub.calls.length, 0, 'never published');
      assert.equal(stub.loads, 2, 'read the row again on the signal');
    });
  });

  it('repeated and late signals are harmless: the row, not the signal, decides', async () => {
    // Far enough ahead that both signals land before the post is due on a loaded machine.
    const at = Date.now() + 6_000;
    const stub = newStub(scheduled(at, 3));
    await withWorker(stubActivities(stub), async (ctx) => {
      const handle = await start(ctx, 'post_repeated');
      await statusWhere(handle, (s) => s.version === 3, 'version 3 loaded');
      // An older version arriving late, twice: the timer stays where the row says.
      await handle.signal(scheduleChangedSignal, 1);
      await handle.signal(scheduleChangedSignal, 2);
      await handle.result();
      assert.equal(stub.calls.length, 1);
      assert.equal(stub.calls[0]!.version, 3);
      assert.ok(stub.calls[0]!.at >= at);
    });
  });

  it('a transient failure retries with backoff until the retry window closes, then records the failure', async () => {
    const at = Date.now() + 300;
    // Window 12 s, base 2 s: attempts at +0, +2 s, +6 s; the next (+14 s) would fall outside.
    // Seconds apart, so that an activity started late on a loaded machine stays inside.
    const stub = newStub(scheduled(at, 1, { retryWindowSeconds: 12, retryBaseSeconds: 2 }), () => ({
      outcome: 'transient',
      error: 'network_unavailable',
      retryAfterMs: null,
    }));
    await withWorker(stubActivities(stub), async (ctx) => {
      const handle = await start(ctx, 'post_transient');
      const retrying = await statusWhere(handle, (s) => s.state === 'retrying', 'retrying');
      assert.equal(retrying.lastError, 'network_unavailable');
      assert.ok(retrying.attempts >= 1);
      assert.deepEqual(await handle.result(), { outcome: 'failed', error: 'network_unavailable' });
      assert.equal(stub.calls.length, 3);
      const retryUntil = at + 12_000;
      for (const c of stub.calls) {
        assert.equal(c.retryUntilMs, retryUntil, 'every attempt knows the window');
        assert.ok(c.at <= retryUntil, 'no attempt after the window closed');
      }
      assert.ok(stub.calls[1]!.at - stub.calls[0]!.at >= 2_000, 'backs off 2 s');
      assert.ok(stub.calls[2]!.at - stub.calls[1]!.at >= 4_000, 'then 4 s');
      assert.deepEqual(stub.failed, [{ version: 1, error: 'network_unavailable' }]);
      const done = await handle.query(publishStatusQuery);
      assert.equal(done.state, 'done');
      assert.equal(done.attempts, 3);
      await maybeRecordTierHistory(ctx, handle.workflowId, 'publishPost-window-closed');
    });
  });

  it('a transient failure followed by success publishes once, on the retry', async () => {
    const at = Date.now() + 200;
    const stub = newStub(scheduled(at, 1), (attempt) =>
      attempt === 1
        ? { outcome: 'transient', error: 'rate_limited', retryAfterMs: 1_500 }
        : { outcome: 'published', postUrn: 'urn:li:share:2', already: false },
    );
    await withWorker(stubActivities(stub), async (ctx) => {
      const handle = await start(ctx, 'post_retry_ok');
      assert.deepEqual(await handle.result(), { outcome: 'published', postUrn: 'urn:li:share:2' });
      assert.equal(stub.calls.length, 2);
      assert.ok(stub.calls[1]!.at - stub.calls[0]!.at >= 1_500, 'honours the network’s Retry-After over the shorter backoff');
      assert.equal(stub.failed.length, 0);
    });
  });
});
