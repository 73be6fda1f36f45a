import type { Knex } from 'knex';

// The calendar's posts (docs/calendar.md; api/operations/calendar/calendar.ts POST_AT_SQL): a
// post sits at its publish time once published, else at its scheduled time, and the calendar
// reads a project's posts whose instant falls in its range. Nothing indexed that expression, so
// every calendar read visited every live post of its projects, growing with their history
// (bench/README.md "Read surfaces"). This index holds the expression itself, so the read is a
// range scan over the days asked for. The expression must stay the one POST_AT_SQL spells, or
// the planner no longer matches it (`npm run bench -- analytics --explain` prints the plan).
//
// Built CONCURRENTLY (outside a transaction) so that posts keep being written while it builds;
// a build interrupted halfway leaves an invalid index of the same name, dropped first on a re-run.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_calendar');
  await knex.raw(
    `create index concurrently posts_calendar on posts (workspace_id, project_id,
       (case when status = 'published' then coalesce(published_at, scheduled_at) else scheduled_at end))
     where deleted_at is null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_calendar');
}
