import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWorkspace } from '../../admin/provision';
import { createWebhookActivities } from '../../activities/webhooks';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { emitEvents, pruneOutbox } from '../../lib/outbox';
import { temporalClient } from '../../lib/temporal/client';

// Outbox retention (docs/webhooks.md "Retention"): relayed events whose deliveries are all
// closed are deleted once older than the retention; nothing a delivery still needs, nothing not
// yet relayed, nothing recent.
describe('outbox retention', () => {
  const DAY = 86_400_000;

  /** Events of a fresh workspace: relayed `daysAgo` (null: not relayed), with one delivery in `status` (none: no delivery). */
  async function events(specs: Array<{ daysAgo: number | null; delivery?: string }>) {
    const ws = await createWorkspace({ name: 'Retention', plan: 'BUSINESS' });
    const ids = await emitEvents(
      db(),
      specs.map((_, i) => ({ workspaceId: ws.id, type: 'post.published' as const, data: { n: i } })),
    );
    const endpoint = newId('webhookEndpoint');
    await db()('webhook_endpoints').insert({
      id: endpoint,
      workspace_id: ws.id,
      url: 'https://receiver.example.com/hook',
      events: ['post.published'],
      secret_last4: 'abcd',
    });
    for (const [i, spec] of specs.entries()) {
      if (spec.daysAgo !== null)
        await db()('outbox_events')
          .where({ id: ids[i] })
          .update({ dispatched_at: new Date(Date.now() - spec.daysAgo * DAY) });
      if (spec.delivery)
        await db()('webhook_deliveries').insert({
          id: newId('webhookDelivery'),
          workspace_id: ws.id,
          endpoint_id: endpoint,
          event_id: ids[i],
          event_type: 'post.published',
          event_created_at: new Date(),
          status: spec.delivery,
        });
    }
    return ids;
  }
  const stored = async (ids: string[]) =>
    new Set(((await db()('outbox_events').whereIn('id', ids).select('id')) as Array<{ id: string }>).map((r) => r.id));

  it('deletes expired relayed events whose deliveries are closed, and keeps the rest', async () => {
    const [delivered, failed, none, pending, retrying, recent, unrelayed] = await events([
      { daysAgo: 31, delivery: 'delivered' },
      { daysAgo: 40, delivery: 'failed' },
      { daysAgo: 31 },
      { daysAgo: 31, delivery: 'pending' },
      { daysAgo: 45, delivery: 'retrying' },
      { daysAgo: 29, delivery: 'delivered' },
      { daysAgo: null },
    ]);
    // Other suites' events may be expired too: delete in batches until none is left.
    while ((await pruneOutbox(db(), 30, 500)) > 0);
    const left = await stored([delivered!, failed!, none!, pending!, retrying!, recent!, unrelayed!]);
    assert.deepEqual([...left].sort(), [pending!, retrying!, recent!, unrelayed!].sort());
    // The delivery rows stay, as the endpoint's history.
    assert.equal((await db()('webhook_deliveries').whereIn('event_id', [delivered!, failed!])).length, 2);
  });

  it('takes at most `limit` per call, oldest relayed first', async () => {
    while ((await pruneOutbox(db(), 30, 500)) > 0);
    const ids = await events([{ daysAgo: 50 }, { daysAgo: 60 }, { daysAgo: 40 }]);
    assert.equal(await pruneOutbox(db(), 30, 2), 2);
    assert.deepEqual([...(await stored(ids))], [ids[2]!], 'the one relayed last is left');
  });

  it('the relay deletes an event no endpoint takes, and stamps one an endpoint takes; retention 0 stamps both', async () => {
    const env = () => new MockActivityEnvironment({ taskQueue: config.temporalTaskQueue });
    const relay = (days: number) =>
      createWebhookActivities({ db: db(), temporal: temporalClient }, { outboxRetentionDays: days, relayPollMs: 50 });
    const subscribed = await createWorkspace({ name: 'Subscribed', plan: 'BUSINESS' });
    const bare = await createWorkspace({ name: 'No endpoints', plan: 'BUSINESS' });
    // Inactive: its events are matched and recorded failed (spec 3.5), and no delivery runs.
    await db()('webhook_endpoints').insert({
      id: newId('webhookEndpoint'),
      workspace_id: subscribed.id,
      url: 'https://receiver.example.com/hook',
      events: ['post.published'],
      secret_last4: 'abcd',
      is_active: false,
      disabled_reason: 'manual',
    });
    const emit = () =>
      emitEvents(db(), [
        { workspaceId: subscribed.id, type: 'post.published', data: {} },
        { workspaceId: subscribed.id, type: 'post.created', data: {} },
        { workspaceId: bare.id, type: 'post.published', data: {} },
      ]);
    const rows = async (ids: string[]) =>
      new Map(
        (
          (await db()('outbox_events').whereIn('id', ids).select('id', 'dispatched_at')) as Array<{
            id: string;
            dispatched_at: Date | null;
          }>
        ).map((r) => [r.id, r.dispatched_at]),
      );

    const [taken, otherType, noEndpoint] = await emit();
    await env().run(relay(30).relayOutbox, { maxRunMs: 300 });
    const after = await rows([taken!, otherType!, noEndpoint!]);
    assert.deepEqual([...after.keys()], [taken], 'only the event an endpoint took is left');
    assert.ok(after.get(taken!) instanceof Date, 'stamped dispatched');
    assert.equal((await db()('webhook_deliveries').where({ event_id: taken }).first('status'))?.status, 'failed');

    const kept = await emit();
    await env().run(relay(0).relayOutbox, { maxRunMs: 300 });
    const stamped = await rows(kept);
    assert.equal(stamped.size, 3, 'retention 0 keeps every event');
    for (const id of kept) assert.ok(stamped.get(id) instanceof Date, `${id} stamped dispatched`);
  });

  it('the relay deletes them while the outbox is drained; retention 0 keeps every event', async () => {
    // Real relays, beside the suite's own (concurrent relays take disjoint rows), starting what
    // they relay on the suite's task queue as the worker's relay would.
    const env = () => new MockActivityEnvironment({ taskQueue: config.temporalTaskQueue });
    const keep = createWebhookActivities({ db: db(), temporal: temporalClient }, { outboxRetentionDays: 0, relayPollMs: 50 });
    const [old] = await events([{ daysAgo: 400, delivery: 'delivered' }]);
    await env().run(keep.relayOutbox, { maxRunMs: 300 });
    assert.ok((await stored([old!])).has(old!), 'kept with retention 0');

    const prune = createWebhookActivities({ db: db(), temporal: temporalClient }, { outboxRetentionDays: 30, relayPollMs: 50 });
    await env().run(prune.relayOutbox, { maxRunMs: 300 });
    assert.ok(!(await stored([old!])).has(old!), 'deleted by the idle relay');
  });
});
