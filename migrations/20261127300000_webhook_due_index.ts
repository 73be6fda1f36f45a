import type { Knex } from 'knex';

// The due-deliveries index (docs/webhooks.md, "Temporal work and database work per delivery").
// Every pass of an endpoint's delivery workflow asks for that endpoint's open deliveries in
// event order (activities/webhookDelivery.ts, deliverDueWebhooks) and for the earliest one due. Open
// rows are a handful at any time, delivered and failed rows accumulate forever, so a partial
// index over the open ones stays small and the pass reads no history. The earlier
// (endpoint_id, created_at, id) index made every pass walk the endpoint's whole history.
//
// Built CONCURRENTLY (outside a transaction) so that deliveries keep being written while it
// builds on a large table. A concurrent build interrupted halfway leaves an invalid index of the
// same name behind, so a re-run drops whatever is there first instead of skipping it.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists webhook_deliveries_due_idx');
  await knex.raw(`
    create index concurrently webhook_deliveries_due_idx
    on webhook_deliveries (endpoint_id, event_created_at, id)
    where status in ('pending', 'retrying')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists webhook_deliveries_due_idx');
}
