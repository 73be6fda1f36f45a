import type { Knex } from 'knex';

// Service-wide switches an operator flips during an incident (bin/admin), independent of any
// workspace: one row per flag. First user: `jobs_paused`, read by the generation workflow's
// first activity (docs/generation.md "Pausing job processing").

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('service_flags', (t) => {
    t.string('key', 60).primary();
    t.jsonb('value').notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('service_flags');
}
