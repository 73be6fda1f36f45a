import type { Knex } from 'knex';

// The reconciler's pass over review rounds whose workflow start was lost (lib/posts/afterCommit.ts
// unstartedReviews) read every row of `posts` to find them, every 30 s. This index holds only the
// posts whose current round is not known started, in the pass's order, so the pass reads that
// queue and nothing else (docs/operations.md "Postgres: the queue tables and VACUUM").
//
// Built CONCURRENTLY (outside a transaction); a build interrupted halfway leaves an invalid
// index of the same name, dropped first on a re-run.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_review_unstarted');
  await knex.raw(
    'create index concurrently posts_review_unstarted on posts (workspace_id, updated_at) where review_synced_round < review_round',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_review_unstarted');
}
