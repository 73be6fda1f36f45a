import type { Knex } from 'knex';

// Knowledge base (spec 2.10, 4.5; docs/knowledge.md).
//
// - knowledge_documents: one `kb_` document per finished ingest. The full body is kept (for
//   re-indexing and grounding) but never returned; `content_hash` (SHA-256 of the body) is what
//   the URL re-sync compares. `scope` PROJECT rows belong to `project_id`; WORKSPACE rows have
//   no project and are visible to every member. `ephemeral` rows (chat uploads) read as not found.
// - knowledge_chunks: the document cut into passages, each with a tsvector in the document's
//   text-search configuration (`regconfig`), under a GIN index; retrieval ranks with ts_rank_cd.
const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('knowledge_documents', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).references('projects.id').onDelete('CASCADE');
    t.string('scope', 20).notNullable();
    t.string('type', 20).notNullable();
    t.string('name', 300).notNullable();
    t.string('status', 20).notNullable();
    t.jsonb('tags').notNullable().defaultTo('[]');
    t.string('source_name', 300);
    t.text('source_url');
    t.string('language', 16);
    t.string('regconfig', 40).notNullable().defaultTo('simple');
    t.string('folder_id', 100);
    t.text('body').notNullable();
    t.specificType('content_hash', 'char(64)').notNullable();
    t.integer('chunk_count').notNullable().defaultTo(0);
    t.boolean('ephemeral').notNullable().defaultTo(false);
    t.string('upload_id', 40);
    t.string('job_id', 40).unique();
    ts(t, 'last_synced_at');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index knowledge_documents_page on knowledge_documents (workspace_id, created_at desc, id desc)');
  await knex.raw(`create index knowledge_documents_url on knowledge_documents (last_synced_at) where type = 'url'`);

  await knex.schema.createTable('knowledge_chunks', (t) => {
    t.bigIncrements('id').primary();
    t.string('document_id', 40).notNullable().references('knowledge_documents.id').onDelete('CASCADE');
    t.string('workspace_id', 40).notNullable();
    t.integer('ordinal').notNullable();
    t.text('content').notNullable();
    t.specificType('tsv', 'tsvector').notNullable();
    t.unique(['document_id', 'ordinal']);
  });
  await knex.raw('create index knowledge_chunks_tsv on knowledge_chunks using gin (tsv)');
  await knex.raw('create index knowledge_chunks_workspace on knowledge_chunks (workspace_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('knowledge_chunks');
  await knex.schema.dropTableIfExists('knowledge_documents');
}
