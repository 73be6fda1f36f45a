import assert from 'node:assert/strict';
import { deliveryWakeListener } from '../../activities/webhookDelivery';
import { db } from '../../lib/db';
import { waitFor } from '../support/wait';

// The delivery passes' shared LISTEN connection (activities/webhookDelivery.ts, docs/webhooks.md "How it
// runs"): a connection lost while passes are subscribed (Postgres restarted, a backend killed)
// must not leave later subscribers listening on a dead socket.

const listeners = async (): Promise<number[]> =>
  (
    await db().raw(
      `select pid from pg_stat_activity where datname = current_database() and query = 'LISTEN webhook_deliveries' and pid <> pg_backend_pid()`,
    )
  ).rows.map((r: { pid: number }) => r.pid);

describe('webhook delivery wake-ups (LISTEN webhook_deliveries)', () => {
  it('wakes the subscriber of the endpoint a NOTIFY names, and no other', async () => {
    const wakes = deliveryWakeListener(db());
    const a = (await wakes.subscribe('whe_wake_a'))!;
    const b = (await wakes.subscribe('whe_wake_b'))!;
    try {
      await db().raw(`select pg_notify('webhook_deliveries', 'whe_wake_a')`);
      assert.equal(await a.next(5_000), true);
      assert.equal(await b.next(200), false);
    } finally {
      a.close();
      b.close();
    }
  });

  it('listens on a fresh connection after the listening one was killed, while others stay subscribed', async () => {
    const wakes = deliveryWakeListener(db());
    const held = (await wakes.subscribe('whe_wake_held'))!;
    try {
      const [pid] = await waitFor(
        async () => {
          const pids = await listeners();
          return pids.length === 1 && pids;
        },
        5_000,
        'the LISTEN connection',
      );
      await db().raw('select pg_terminate_backend(?)', [pid]);
      // The lost connection is noticed (its socket closes), and the next subscriber listens anew.
      await waitFor(async () => !(await listeners()).includes(pid!), 5_000, 'the killed backend gone');
      await new Promise((r) => setTimeout(r, 200));
      const late = (await wakes.subscribe('whe_wake_late'))!;
      try {
        await db().raw(`select pg_notify('webhook_deliveries', 'whe_wake_late')`);
        assert.equal(await late.next(5_000), true, 'a subscriber after the loss is woken by NOTIFY');
        const [now] = await listeners();
        assert.ok(now !== undefined && now !== pid, 'a new backend listens');
      } finally {
        late.close();
      }
    } finally {
      held.close();
    }
  });
});
