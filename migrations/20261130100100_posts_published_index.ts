import type { Knex } from 'knex';

// A project's published posts in publication order (docs/analytics.md): the per-post analytics
// list (`GET /v1/analytics/posts`, newest first by default) and the overview's reads of the
// posts published in a period. Without it the list's first page sorted every published post of
// the project (12 ms at 5,000 posts, growing with the history: bench/README.md, analytics);
// with it, the page is the index's first 51 entries.
//
// Built CONCURRENTLY (outside a transaction) so that posts keep being written while it builds;
// a build interrupted halfway leaves an invalid index of the same name, dropped first on a re-run.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_published');
  await knex.raw(
    `create index concurrently posts_published on posts (workspace_id, project_id, published_at, id) where status = 'published'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_published');
}
