import type { Knex } from 'knex';

// Media library and uploads (spec 2.13, 4.5, 4.7, 2.16 storage).
//
// - uploads: one `upl_` handle per presigned PUT (spec 4.5). The object lives at `object_key`
//   (under the workspace) until the handle expires; the sweep (workflows/sweepUploads.ts) deletes
//   expired handles and their objects unless an asset still uses that key.
// - media_assets: the library. Objects are keyed by workspace and SHA-256 of their bytes, and
//   (workspace_id, sha256) is unique, so the same image imported twice is one asset and a retried
//   import lands on the same key. Storage meters (spec 2.16) are sums over this table.
const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('uploads', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).references('projects.id').onDelete('SET NULL');
    t.string('purpose', 20).notNullable();
    t.string('file_name', 200).notNullable();
    t.string('content_type', 200).notNullable();
    t.bigInteger('bytes').notNullable();
    t.string('object_key', 300).notNullable().unique();
    ts(t, 'expires_at').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at']);
  });

  await knex.schema.createTable('media_assets', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).references('projects.id').onDelete('SET NULL');
    t.string('key', 300).notNullable().unique();
    t.specificType('sha256', 'char(64)').notNullable();
    t.string('mime_type', 100).notNullable();
    t.bigInteger('bytes').notNullable();
    t.integer('width').notNullable();
    t.integer('height').notNullable();
    t.text('alt').notNullable().defaultTo('');
    t.string('title', 120).notNullable().defaultTo('');
    t.string('file_name', 200);
    t.string('upload_id', 40);
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.unique(['workspace_id', 'sha256']);
  });
  await knex.raw('create index media_assets_page on media_assets (workspace_id, created_at desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('media_assets');
  await knex.schema.dropTableIfExists('uploads');
}
