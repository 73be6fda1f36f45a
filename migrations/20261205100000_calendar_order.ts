import type { Knex } from 'knex';

// The calendar reads each kind of entry in order, at most 5,001 of it (api/operations/calendar):
// posts by their calendar instant then id, slots by date then id. Its indexes held the instant
// (or the date) but not the id, so Postgres read every entry of the range and sorted them to keep
// the first 5,001: the largest project's month at a million posts read 18,297 posts for it (84 ms
// warm) and 5,527 draft slots. With the id as their last column, the indexes hold the read's
// whole order and the read stops at its limit (14 ms). Same names, predicates and leading
// columns as before (migrations 20261201100000 and 20261201100200).
//
// Each index is built CONCURRENTLY beside the one it replaces (outside a transaction, so writes
// go on), which is dropped once the new one is ready; the new one then takes its name. A build
// interrupted halfway leaves an invalid `_next` index, dropped first on a re-run.

export const config = { transaction: false };

const ENTRY = `(case when status = 'published' then coalesce(published_at, scheduled_at) else scheduled_at end)`;
const ON_SCHEDULE = `deleted_at is null and status in ('scheduled', 'published', 'failed_to_publish')`;

/** Each index's name and definition (what follows `on`), without and with the id. */
export const INDEXES: Array<[name: string, before: string, after: string]> = [
  [
    'posts_calendar_entries',
    `posts (workspace_id, project_id, ${ENTRY}) where ${ON_SCHEDULE}`,
    `posts (workspace_id, project_id, ${ENTRY}, id) where ${ON_SCHEDULE}`,
  ],
  [
    'calendar_slots_posts',
    'calendar_slots (workspace_id, project_id, date) where post_id is not null',
    'calendar_slots (workspace_id, project_id, date, id) where post_id is not null',
  ],
  [
    'calendar_slots_notes',
    'calendar_slots (workspace_id, project_id, date) where note_id is not null',
    'calendar_slots (workspace_id, project_id, date, id) where note_id is not null',
  ],
];

/** Builds `name` anew on `definition` without holding writes back; a later migration rebuilds these indexes the same way. */
export async function rebuild(knex: Knex, name: string, definition: string): Promise<void> {
  await knex.raw(`drop index concurrently if exists ${name}_next`);
  await knex.raw(`create index concurrently ${name}_next on ${definition}`);
  await knex.raw(`drop index concurrently if exists ${name}`);
  await knex.raw(`alter index ${name}_next rename to ${name}`);
}

export async function up(knex: Knex): Promise<void> {
  for (const [name, , after] of INDEXES) await rebuild(knex, name, after);
}

export async function down(knex: Knex): Promise<void> {
  for (const [name, before] of INDEXES) await rebuild(knex, name, before);
}
