import type { Knex } from 'knex';

// Operator overrides of a workspace's storage limits (bin/admin `workspace set-storage-limit`,
// spec 2.16 storage meters): null keeps the plan's limit, a number replaces it, and
// UNLIMITED_OVERRIDE (-1, lib/limits.ts) lifts it, as it does for the AI budget and spend cap
// columns that already hold overrides.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.bigInteger('storage_limit_bytes');
    t.integer('asset_limit');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropColumn('storage_limit_bytes');
    t.dropColumn('asset_limit');
  });
}
