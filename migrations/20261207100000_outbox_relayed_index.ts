import type { Knex } from 'knex';
import { rebuild } from './20261205100000_calendar_order';

// Retention deletes relayed events oldest relayed first (lib/outbox.ts pruneOutbox), through the
// index on (dispatched_at, seq). That index also held an entry for every event not relayed yet,
// dispatched_at being null, so every event the service wrote added one more index entry than it
// needed. It now holds the relayed events only: the ones retention reads (`dispatched_at < …`
// implies the predicate). Same name; rebuilt CONCURRENTLY, as in migration 20261205100000.

export const config = { transaction: false };

const NAME = 'outbox_events_dispatched_at_seq_index';

export async function up(knex: Knex): Promise<void> {
  await rebuild(knex, NAME, 'outbox_events (dispatched_at, seq) where dispatched_at is not null');
}

export async function down(knex: Knex): Promise<void> {
  await rebuild(knex, NAME, 'outbox_events (dispatched_at, seq)');
}
