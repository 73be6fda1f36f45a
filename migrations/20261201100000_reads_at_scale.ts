import type { Knex } from 'knex';

// Reads at a million posts (bench/README.md, reads). The hottest reads are prepared statements
// (lib/db.ts readPrepared): after five executions Postgres may keep a generic plan, planned
// without the parameters' values. Without statistics on how project_id determines workspace_id,
// such a plan multiplies the two columns' selectivities and expects one row for any (workspace,
// project), so it chose whichever index held both columns and sorted the "one" row: for a
// project of 100,000 posts the post list's first page read and sorted all of them (1.6 s at
// 1,000,000 posts, against 0.1 ms for the backward index scan it takes with these statistics).
//
// - Functional-dependency statistics (CREATE STATISTICS … (dependencies)) on the pairs that
//   scope the reads: a project, an endpoint, a document belong to one workspace. ANALYZE fills
//   them; an estimate then takes the pair's selectivity as the project's (about 100 rows).
// - posts_page: the post list's order over the live posts, the predicate (`deleted_at is null`)
//   every read of live posts carries, so its page needs no filter and no sort
//   (api/operations/posts/posts.ts postsPage).
// - calendar_slots_posts / calendar_slots_notes: a project's slots of one kind by date. The
//   calendar reads the drafts' slots and the notes' slots apart (api/operations/calendar);
//   from the index of all slots the planner expected the month of the other kind too, and
//   joined the notes' slots to a sequential scan of every note in the database.
//
// Built CONCURRENTLY (outside a transaction) so that posts keep being written while it builds;
// a build interrupted halfway leaves an invalid index of the same name, dropped first on a re-run.

export const config = { transaction: false };

const STATISTICS: Array<[name: string, table: string, columns: string]> = [
  ['posts_workspace_project', 'posts', 'workspace_id, project_id'],
  ['post_metric_state_workspace_project', 'post_metric_state', 'workspace_id, project_id'],
  ['notes_workspace_project', 'notes', 'workspace_id, project_id'],
  ['ideas_workspace_project', 'ideas', 'workspace_id, project_id'],
  ['calendar_slots_workspace_project', 'calendar_slots', 'workspace_id, project_id'],
  ['jobs_workspace_project', 'jobs', 'workspace_id, project_id'],
  ['media_assets_workspace_project', 'media_assets', 'workspace_id, project_id'],
  ['webhook_deliveries_workspace_endpoint', 'webhook_deliveries', 'workspace_id, endpoint_id'],
  ['knowledge_chunks_workspace_document', 'knowledge_chunks', 'workspace_id, document_id'],
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists posts_page');
  await knex.raw('create index concurrently posts_page on posts (workspace_id, project_id, created_at, id) where deleted_at is null');
  for (const kind of ['post', 'note']) {
    await knex.raw(`drop index concurrently if exists calendar_slots_${kind}s`);
    await knex.raw(
      `create index concurrently calendar_slots_${kind}s on calendar_slots (workspace_id, project_id, date) where ${kind}_id is not null`,
    );
  }
  for (const [name, table, columns] of STATISTICS) {
    await knex.raw(`drop statistics if exists ${name}`);
    await knex.raw(`create statistics ${name} (dependencies) on ${columns} from ${table}`);
  }
  await knex.raw(`analyze ${[...new Set(STATISTICS.map(([, table]) => table))].join(', ')}`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [name] of STATISTICS) await knex.raw(`drop statistics if exists ${name}`);
  for (const kind of ['post', 'note']) await knex.raw(`drop index concurrently if exists calendar_slots_${kind}s`);
  await knex.raw('drop index concurrently if exists posts_page');
}
