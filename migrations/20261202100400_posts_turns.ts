import type { Knex } from 'knex';

// A post's turn among its workspace's posts scheduled for the same instant
// (lib/publishing/turns.ts) is counted here: the scheduled posts of one workspace and instant,
// in id order, so a turn is the number of such posts with a smaller id, read by a range of this
// index bounded at the spread. Only scheduled, live posts are in it: a post leaves it when it is
// published, unscheduled or deleted.
//
// Built CONCURRENTLY (outside a transaction); a build interrupted halfway leaves an invalid
// index of the same name, dropped first on a re-run.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_turns');
  await knex.raw(
    `create index concurrently posts_turns on posts (workspace_id, scheduled_at, id) where status = 'scheduled' and deleted_at is null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_turns');
}
