import assert from 'node:assert/strict';
import { DUE_DELIVERIES_SQL, QUEUE_SQL } from '../../activities/webhookDelivery';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { workspaceWithKey } from '../support/factories';

// The partial index of open deliveries (migration 20261127300000, docs/webhooks.md): the two
// queries of every delivery pass must use it on an endpoint with a long delivered history, so a
// pass costs the same on day 1 and on day 1,000. Seeded and planned inside a transaction that is
// rolled back, so the shared test database keeps neither the rows nor the statistics.

const HISTORY = 20_000;
const OPEN = 5;

describe('webhook due-deliveries index', function () {
  this.timeout(60_000);

  it('serves the pass queries from webhook_deliveries_due_idx on an endpoint with a long delivered history', async () => {
    const { workspace } = await workspaceWithKey();
    const endpointId = newId('webhookEndpoint');
    const rollback = new Error('rollback');
    const plans: Record<string, string> = {};
    await db()
      .transaction(async (trx) => {
        await trx('webhook_endpoints').insert({
          id: endpointId,
          workspace_id: workspace.id,
          url: 'https://hooks.example.com/x',
          events: ['post.updated'],
          secret_last4: 'abcd',
        });
        // A delivered history, then a few open rows: the shape of any endpoint that has been live a while.
        await trx.raw(
          `insert into webhook_deliveries (id, workspace_id, endpoint_id, event_id, event_type, event_created_at, status, attempt_count, delivered_at)
           select 'whd_seed_' || g, ?, ?, 'evt_seed_' || g, 'post.updated', now() - make_interval(secs => ? - g), 'delivered', 1, now()
           from generate_series(1, ?) g`,
          [workspace.id, endpointId, HISTORY, HISTORY],
        );
        await trx.raw(
          `insert into webhook_deliveries (id, workspace_id, endpoint_id, event_id, event_type, event_created_at, status)
           select 'whd_open_' || g, ?, ?, 'evt_open_' || g, 'post.updated', now(), 'pending' from generate_series(1, ?) g`,
          [workspace.id, endpointId, OPEN],
        );
        await trx.raw('analyze webhook_deliveries');
        const explain = async (sql: string, bindings: Array<string | number | string[]>) =>
          ((await trx.raw(`explain ${sql}`, bindings)).rows as Array<{ 'QUERY PLAN': string }>).map((r) => r['QUERY PLAN']).join('\n');
        plans.due = await explain(DUE_DELIVERIES_SQL, [endpointId, [], 100]);
        plans.next = await explain(QUEUE_SQL, [endpointId, endpointId]);
        // The pass's answer is unchanged: the open rows, in event order.
        const due = (await trx.raw(DUE_DELIVERIES_SQL, [endpointId, [], 100])).rows as Array<{ id: string }>;
        assert.equal(due.length, OPEN);
        const queue = (await trx.raw(QUEUE_SQL, [endpointId, endpointId])).rows[0] as { open: number };
        assert.equal(queue.open, OPEN, 'the queue depth counts the open rows only');
        throw rollback;
      })
      .catch((err: unknown) => {
        if (err !== rollback) throw err;
      });
    assert.match(plans.due!, /webhook_deliveries_due_idx/, `due query plan:\n${plans.due}`);
    assert.match(plans.next!, /webhook_deliveries_due_idx/, `queue query plan:\n${plans.next}`);
    assert.doesNotMatch(plans.next!, /Seq Scan on webhook_deliveries/, plans.next);
    assert.doesNotMatch(plans.due!, /Seq Scan on webhook_deliveries/, plans.due);
    assert.equal(await db()('webhook_endpoints').where({ id: endpointId }).first(), undefined, 'rolled back');
  });
});
