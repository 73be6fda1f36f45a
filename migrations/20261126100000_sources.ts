import type { Knex } from 'knex';

// Sources (spec 2.11, 4.5; docs/sources.md): text given inline (synchronous) or extracted from an
// uploaded file by a SOURCE_INGEST job (documents read, recordings transcribed), with the topics
// and hooks found in it.
//
// - `text` holds the extracted text (the API returns a preview of it, never the whole);
// - (workspace_id, upload_id) is unique: the same upload submitted twice is one source and one
//   ingest (spec 4.9: workers de-duplicate by uploadId). `upload_id` is not a foreign key: the
//   upload sweep removes expired handles while their sources stay.
// - `job_id` is the latest ingest job of a file source (a failed ingest can be run again).
const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sources', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).notNullable().references('projects.id').onDelete('CASCADE');
    t.string('type', 10).notNullable();
    t.string('name', 200).notNullable();
    t.string('file_name', 200);
    t.string('mime_type', 200);
    t.bigInteger('bytes');
    t.string('status', 20).notNullable();
    t.text('text');
    t.string('language', 16);
    t.double('duration_seconds');
    t.jsonb('topics');
    t.jsonb('hooks');
    t.string('upload_id', 40);
    t.string('job_id', 40).references('jobs.id').onDelete('SET NULL');
    t.string('error_code', 60);
    t.string('created_by', 40);
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    t.unique(['workspace_id', 'upload_id']);
  });
  await knex.raw('create index sources_page on sources (workspace_id, created_at desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('sources');
}
