import type { Knex } from 'knex';

// The overview's best posts (lib/analytics/overview.ts): the period's 5 posts with the most
// engagements. They were every post published in the period, joined to its metrics and sorted
// (2,336 posts for the largest project's 30 days at 1,000,000 posts). This index holds the
// counted posts' metrics rows per project and UTC day of publishing (counted_at, migration
// 20261203120000) in the answer's order, so each day of the period gives its own best 5 in five
// index entries, and the period's best 5 are among them: the read grows with the period's days,
// not its posts. The columns the order is computed from are included so the read can stay in
// the index.
//
// Built CONCURRENTLY (outside a transaction); a build interrupted halfway leaves an invalid index
// of the same name, dropped first on a re-run.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists post_metric_state_best');
  await knex.raw(
    `create index concurrently post_metric_state_best on post_metric_state
       (workspace_id, project_id, ((counted_at at time zone 'UTC')::date), (reactions + comments + reshares) desc, impressions desc, post_id)
       include (counted_at, reactions, comments, reshares)
       where counted_at is not null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists post_metric_state_best');
}
