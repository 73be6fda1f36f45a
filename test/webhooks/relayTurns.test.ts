import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { claimUndispatched, emitEvents, type OutboxEvent } from '../../lib/outbox';
import type { Knex } from 'knex';
import { createWorkspace } from '../../admin/provision';
import { assertReadThroughIndexes, statementsOf } from '../support/statements';

// The relay's claim takes the outbox in turns by workspace (lib/outbox.ts claimUndispatched,
// docs/operations.md "Fairness between workspaces"): a workspace with a burst of events waiting
// takes one share of a batch, so another workspace's event is relayed in the next batch, not
// after the whole burst.
describe('outbox relay: batches taken in turns by workspace', () => {
  it('a batch gives every waiting workspace a turn before the burst gets a second one, each workspace oldest first', async () => {
    const [noisy, quietB, quietC] = await Promise.all(
      ['Noisy', 'Quiet B', 'Quiet C'].map((name) => createWorkspace({ name, plan: 'BUSINESS' })),
    );
    const burst: OutboxEvent[] = Array.from({ length: 300 }, (_, i) => ({
      workspaceId: noisy!.id,
      type: 'post.published',
      data: { n: i },
    }));
    const burstIds = await emitEvents(db(), burst);
    // Committed after the whole burst: first come, first served would relay them last.
    const [b1, b2] = await emitEvents(db(), [
      { workspaceId: quietB!.id, type: 'post.published', data: { n: 1 } },
      { workspaceId: quietB!.id, type: 'post.published', data: { n: 2 } },
    ]);
    const [c1] = await emitEvents(db(), [{ workspaceId: quietC!.id, type: 'post.published', data: { n: 1 } }]);

    // A batch as large as the number of workspaces with events waiting (earlier suites may have
    // left some): one turn, so one event of each.
    const { rows } = await db().raw('select count(distinct workspace_id)::int as n from outbox_events where dispatched_at is null');
    const waiting: number = rows[0].n;
    const claimed = await db()
      .transaction(async (trx) => {
        const batch = await claimUndispatched(trx, waiting);
        throw Object.assign(new Error('rollback'), { batch });
      })
      .catch((err: { batch?: Awaited<ReturnType<typeof claimUndispatched>> }) => err.batch!);
    assert.ok(claimed, 'the claim ran');
    const ids = claimed.map((e) => e.id);
    assert.ok(ids.includes(b1!), "quiet B's oldest event is in the batch");
    assert.ok(ids.includes(c1!), "quiet C's event is in the batch");
    assert.ok(!ids.includes(b2!), "quiet B's second event waits for the next turn");
    assert.deepEqual(
      ids.filter((id) => burstIds.includes(id)),
      [burstIds[0]],
      "the burst's oldest event, and only it",
    );
    assert.deepEqual(
      claimed.map((e) => e.seq),
      claimed.map((e) => e.seq).sort((x, y) => x - y),
      'answered in seq order',
    );
    // Nothing was stamped: the claim was rolled back, and the rows wait for the relay.
    const left = await db()('outbox_events')
      .whereIn('id', [...burstIds, b1!, b2!, c1!])
      .whereNull('dispatched_at')
      .count<{ n: string }[]>({ n: '*' });
    assert.equal(Number(left[0]!.n), 303);
    await db()('outbox_events')
      .whereIn('id', [...burstIds, b1!, b2!, c1!])
      .update({ dispatched_at: db().fn.now() });
  });

  it("reads the backlog through its index, never a sequential or bitmap scan, so a relayed event's dead entry is read at most once", async () => {
    // Relayed events leave dead entries in the backlog's index until VACUUM.
    const ws = await createWorkspace({ name: 'Relayed', plan: 'BUSINESS' });
    const ids = await emitEvents(
      db(),
      Array.from({ length: 2000 }, (_, i) => ({ workspaceId: ws.id, type: 'post.created' as const, data: { n: i } })),
    );
    // The statistics as an ANALYZE taken while they waited left them (autovacuum's analyze runs
    // whenever a tenth of the table changed): the planner's own choice is then a bitmap or a
    // sequential scan.
    await db().raw('analyze outbox_events');
    await db()('outbox_events').whereIn('id', ids).delete();
    const plan = await db().transaction(async (trx) => {
      const claim = assertReadThroughIndexes(await statementsOf(() => claimUndispatched(trx, 200)), 'workspace_turn');
      // Planned in the claim's own transaction, under the settings it runs with. The query event
      // gives Postgres's own placeholders ($1); knex.raw takes `?`.
      const sql = `explain (format json) ${claim.sql.replace(/\$\d+/g, '?')}`;
      const { rows } = await trx.raw(sql, claim.bindings as Knex.ValueDict[]);
      return JSON.stringify(rows[0]['QUERY PLAN']);
    });
    assert.ok(!plan.includes('Bitmap'), plan);
    assert.match(plan, /"Index Name":"outbox_events_undispatched"/);
  });

  it('a lone workspace still fills whole batches, oldest first', async () => {
    const ws = await createWorkspace({ name: 'Alone', plan: 'BUSINESS' });
    const ids = await emitEvents(
      db(),
      Array.from({ length: 50 }, (_, i) => ({ workspaceId: ws.id, type: 'post.created' as const, data: { n: i } })),
    );
    const claimed = await db()
      .transaction(async (trx) => {
        const batch = await claimUndispatched(trx, 10_000);
        throw Object.assign(new Error('rollback'), { batch });
      })
      .catch((err: { batch?: Awaited<ReturnType<typeof claimUndispatched>> }) => err.batch!);
    assert.deepEqual(
      claimed.filter((e) => e.workspace_id === ws.id).map((e) => e.id),
      ids,
    );
    await db()('outbox_events').whereIn('id', ids).update({ dispatched_at: db().fn.now() });
  });
});
