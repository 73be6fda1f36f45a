import type { Knex } from 'knex';

// The relay's claim (lib/outbox.ts claimUndispatched) takes the undispatched events in turns by
// workspace: a window partitioned by workspace and ordered by seq over every waiting row. This
// index holds exactly those rows in that order, so the claim is an index-only scan of the
// backlog, never a sort of it nor a read of the relayed history; rows leave it as they are
// stamped dispatched.
//
// Built CONCURRENTLY (outside a transaction); a build interrupted halfway leaves an invalid
// index of the same name, dropped first on a re-run.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists outbox_events_undispatched');
  await knex.raw('create index concurrently outbox_events_undispatched on outbox_events (workspace_id, seq) where dispatched_at is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists outbox_events_undispatched');
}
