import type { Knex } from 'knex';

// Redelivering one event to one endpoint (docs/webhooks.md "Redelivering an event"): the
// delivery row is reopened and the endpoint's delivery workflow woken (lib/temporal/start/webhookEndpoint.ts),
// so the attempt is made by the same pass, with the same signature, payload and Webhook-Id, as
// any delivery. The earlier attempts stay recorded; the new ones are numbered after them.

export class RedeliveryRefused extends Error {}

export interface ReopenedDelivery {
  id: string;
  endpoint_id: string;
  workspace_id: string;
  event_id: string;
  status: string;
  attempt_count: number;
}

/**
 * Reopens a delivered or failed delivery (or makes a retrying one due now). Refused while the
 * delivery waits for its first attempt, when its endpoint is disabled or deleted (the pass would
 * close it again at once), and when the event is no longer stored.
 */
export async function reopenDelivery(db: Knex, deliveryId: string): Promise<ReopenedDelivery> {
  return db.transaction(async (trx) => {
    const d = await trx('webhook_deliveries as d')
      .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
      .leftJoin('outbox_events as e', 'e.id', 'd.event_id')
      .where('d.id', deliveryId)
      .forUpdate('d')
      .first('d.id', 'd.status', 'w.is_active', 'w.deleted_at', 'e.id as stored_event');
    if (!d) throw new RedeliveryRefused(`no webhook delivery ${deliveryId}`);
    if (d.deleted_at) throw new RedeliveryRefused(`the endpoint of ${deliveryId} is deleted`);
    if (!d.is_active) throw new RedeliveryRefused(`the endpoint of ${deliveryId} is disabled; enable it first`);
    if (!d.stored_event) throw new RedeliveryRefused(`the event of ${deliveryId} is no longer stored`);
    if (d.status === 'pending') throw new RedeliveryRefused(`${deliveryId} is already waiting for its first attempt`);
    const [row] = await trx('webhook_deliveries')
      .where({ id: deliveryId })
      .update({
        status: 'pending',
        next_attempt_at: null,
        failure_reason: null,
        failed_at: null,
        delivered_at: null,
        updated_at: trx.fn.now(),
      })
      .returning(['id', 'endpoint_id', 'workspace_id', 'event_id', 'status', 'attempt_count']);
    return row as ReopenedDelivery;
  });
}
