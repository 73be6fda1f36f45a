import type { Knex } from 'knex';

// Scheduled publishing (spec 3.1): which schedule version the post's workflow has been told
// about, so a change committed while Temporal was unreachable is caught up by the reconciler.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('posts', (t) => {
    t.integer('workflow_synced_version').notNullable().defaultTo(0);
  });
  await knex.raw(`create index posts_schedule_unsynced on posts (schedule_version) where workflow_synced_version < schedule_version`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists posts_schedule_unsynced');
  await knex.schema.alterTable('posts', (t) => t.dropColumn('workflow_synced_version'));
}
