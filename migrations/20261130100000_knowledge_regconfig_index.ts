import type { Knex } from 'knex';

// The text-search configurations of a workspace's documents (docs/knowledge.md "Search"), read
// by every search and every grounded generation (lib/knowledge/documents.ts
// workspaceRegconfigsSql). Without this index that read visited every document of the
// workspace: 0.4 ms at 10,000 chunks, 10.7 ms at 100,000 (bench/README.md, knowledge). With it,
// the read asks once per configuration Postgres ships whether the workspace has a document in
// it: about twenty index probes, whatever the corpus size.
//
// Built CONCURRENTLY (outside a transaction) so that ingests keep writing while it builds; a
// build interrupted halfway leaves an invalid index of the same name, dropped first on a re-run.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists knowledge_documents_regconfig');
  await knex.raw('create index concurrently knowledge_documents_regconfig on knowledge_documents (workspace_id, regconfig)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists knowledge_documents_regconfig');
}
