import type { Knex } from 'knex';
import { installRollupKeepers } from './20261203120000_post_publish_hours';

// Migration 20261203120000 now leaves the rollup's backfill to the reconciler, online (its
// comment). A database that ran its first version backfilled the rollup under a lock that held
// writers back, and has the triggers of that version: here it gets the backfill's state, done,
// and the triggers and functions of today's version, which keep the same figures. On a database
// that ran today's version this changes nothing (its state is kept; the functions are the same).

export async function up(knex: Knex): Promise<void> {
  await installRollupKeepers(knex, 'done');
}

export async function down(): Promise<void> {
  // Today's functions keep the rollup as the first version's did; nothing to undo.
}
