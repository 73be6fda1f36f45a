import type { Knex } from 'knex';

// Knowledge search reads one workspace's chunks matching a text query (lib/knowledge/documents.ts
// searchDocuments, the writer's grounding read). With the text-search index over every
// workspace's chunks, Postgres took the query's matches in the whole database and intersected
// them with the workspace's chunks (a BitmapAnd): the work grew with every other workspace's
// corpus (10,000 matches read for 4,995 of the workspace's at 1,000,000 posts, bench/README.md,
// reads). One GIN index on (workspace_id, tsv) answers both conditions at once; btree_gin gives
// GIN its equality operator class for the text column (a trusted extension: a database owner
// may create it). Every search names its workspace, so the index over every workspace's chunks
// goes.
//
// Built CONCURRENTLY (outside a transaction) so that chunks keep being written while it builds;
// a build interrupted halfway leaves an invalid index of the same name, dropped first on a re-run.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists btree_gin');
  await knex.raw('drop index concurrently if exists knowledge_chunks_search');
  await knex.raw('create index concurrently knowledge_chunks_search on knowledge_chunks using gin (workspace_id, tsv)');
  await knex.raw('drop index concurrently if exists knowledge_chunks_tsv');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists knowledge_chunks_tsv');
  await knex.raw('create index concurrently knowledge_chunks_tsv on knowledge_chunks using gin (tsv)');
  await knex.raw('drop index concurrently if exists knowledge_chunks_search');
}
