import type { Knex } from 'knex';

// What operators set on a running service (bin/admin, issue 12):
//
// - service_flags: service-wide switches flipped during an incident, independent of any
//   workspace; one row per flag. First user: `jobs_paused`, read by the generation workflow's
//   first activity (docs/generation.md "Pausing job processing").
// - ai_budgets: a weekly AI budget set for one budget target of a workspace (spec 2.16): a
//   project (budget_key = project id) or the company-page pool (budget_key = 'pool'). Without
//   a row the target has the workspace's weekly_ai_budget_cents, else the plan's budget.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('service_flags', (t) => {
    t.string('key', 60).primary();
    t.jsonb('value').notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('ai_budgets', (t) => {
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('budget_key', 40).notNullable();
    t.integer('weekly_budget_cents').notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'budget_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ai_budgets');
  await knex.schema.dropTableIfExists('service_flags');
}
