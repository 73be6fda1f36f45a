import type { Knex } from 'knex';

// posts_calendar (migration 20261130100200) held every live post, so it also matched any read of
// a project's live posts. A prepared statement's generic plan expects one row for a (workspace,
// project) with a range on another column, prices every index on those two columns alike, and
// took this one: the post list filtered by dates read all 100,000 posts of a large project
// through it and sorted them (1.6 s at 1,000,000 posts), where posts_page holds the range in
// order (0.2 ms; bench/README.md, reads). The calendar reads only scheduled, published and failed
// posts (api/operations/calendar/calendar.ts), sent with their values, so Postgres proves this
// narrower predicate for it; the post list, whose status is a parameter or absent, cannot, and
// no longer sees the index. The expression stays the one POST_AT_SQL spells.
//
// Built CONCURRENTLY (outside a transaction) beside the old index, which goes once it is ready;
// a build interrupted halfway leaves an invalid index of the same name, dropped first on a re-run.

export const config = { transaction: false };

const ENTRY = `(case when status = 'published' then coalesce(published_at, scheduled_at) else scheduled_at end)`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_calendar_entries');
  await knex.raw(
    `create index concurrently posts_calendar_entries on posts (workspace_id, project_id, ${ENTRY})
     where deleted_at is null and status in ('scheduled', 'published', 'failed_to_publish')`,
  );
  await knex.raw('drop index concurrently if exists posts_calendar');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `create index concurrently if not exists posts_calendar on posts (workspace_id, project_id, ${ENTRY}) where deleted_at is null`,
  );
  await knex.raw('drop index concurrently if exists posts_calendar_entries');
}
