import type { Knex } from 'knex';

// The analytics overview's sync block (lib/analytics/overview.ts) read every post_metric_state
// row of the project to count the few that need attention and to find the latest sync: 55,000
// rows, 32 ms, for the largest project at 1,000,000 posts (bench/README.md "reads"). Two
// indexes make it a read of what it shows:
// - post_metric_state_attention holds only the rows in the states the overview counts (the
//   list ATTENTION_STATES spells; change both together), so settled history is never read;
// - post_metric_state_synced answers the project's latest sync in one probe.
//
// Built CONCURRENTLY (outside a transaction); a build interrupted halfway leaves an invalid
// index of the same name, dropped first on a re-run.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists post_metric_state_attention');
  await knex.raw(
    `create index concurrently post_metric_state_attention on post_metric_state (workspace_id, project_id)
     where sync_state in ('pending', 'blocked', 'failed')`,
  );
  await knex.raw('drop index concurrently if exists post_metric_state_synced');
  await knex.raw(
    `create index concurrently post_metric_state_synced on post_metric_state (workspace_id, project_id, last_synced_at desc nulls last)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists post_metric_state_synced');
  await knex.raw('drop index concurrently if exists post_metric_state_attention');
}
