import type { Knex } from 'knex';

// Review before publishing (docs/review.md, spec 2.4, 2.7 `review`, 3.1):
//
// - posts.review_round: the number of the post's current review round (0: never requested).
//   The review block itself stays in posts.review (jsonb, spec 2.7 fields); the round numbers
//   the workflow (`review-<postId>-<round>`) and lets a late decision or deadline of an old
//   round be told apart from the current one. posts.review_synced_round: the last round whose
//   workflow is known started (the reconciler starts the ones behind, as for publishing).
// - workspaces.default_reviewer_user_id: who reviews when a post is moved to the review board
//   category without naming a reviewer (null: any workspace admin decides).

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('posts', (t) => {
    t.integer('review_round').notNullable().defaultTo(0);
    // The last round whose workflow is known started; the reconciler starts the ones behind.
    t.integer('review_synced_round').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('workspaces', (t) => {
    t.string('default_reviewer_user_id', 40).nullable().references('users.id').onDelete('SET NULL');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropColumn('default_reviewer_user_id');
  });
  await knex.schema.alterTable('posts', (t) => {
    t.dropColumn('review_round');
    t.dropColumn('review_synced_round');
  });
}
