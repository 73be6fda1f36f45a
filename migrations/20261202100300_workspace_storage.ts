import type { Knex } from 'knex';

// What a workspace's media library holds (GET /v1/usage, the storage limits of an import;
// lib/media/assets.ts storageUsed), kept as it changes instead of summed on every read: summing
// the 20,000 assets of the largest workspace at 1,000,000 posts cost the usage read 20 ms
// (bench/README.md "reads"). A trigger on media_assets keeps it, so every writer (an import, a
// workspace's deletion) agrees with it without knowing of it. The trigger is created before the
// backfill, in one transaction whose lock on media_assets holds imports back meanwhile: no asset
// is counted twice or missed.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workspace_storage', (t) => {
    t.string('workspace_id', 40).primary().references('workspaces.id').onDelete('CASCADE');
    t.bigInteger('used_bytes').notNullable().defaultTo(0);
    t.integer('used_assets').notNullable().defaultTo(0);
  });
  await knex.raw(`
    create or replace function workspace_storage_count() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into workspace_storage (workspace_id, used_bytes, used_assets) values (new.workspace_id, new.bytes, 1)
        on conflict (workspace_id) do update
          set used_bytes = workspace_storage.used_bytes + excluded.used_bytes, used_assets = workspace_storage.used_assets + 1;
      else
        -- A workspace's deletion cascades here and to its row: an UPDATE of a row already gone changes nothing.
        update workspace_storage set used_bytes = used_bytes - old.bytes, used_assets = used_assets - 1
        where workspace_id = old.workspace_id;
      end if;
      return null;
    end $$`);
  await knex.raw(
    'create trigger workspace_storage_count after insert or delete on media_assets for each row execute function workspace_storage_count()',
  );
  await knex.raw(`
    insert into workspace_storage (workspace_id, used_bytes, used_assets)
    select workspace_id, sum(bytes), count(*) from media_assets group by workspace_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists workspace_storage_count on media_assets');
  await knex.raw('drop function if exists workspace_storage_count()');
  await knex.schema.dropTableIfExists('workspace_storage');
}
