import type { Knex } from 'knex';

// AI post generation (spec 2.12, 2.16, 3.2, 4.4, 8): spend meters and the job columns that tie
// a job to the capacity it reserved.
//
// - ai_spend_days: the daily API AI-spend cap, one row per (workspace, UTC day). `reserved_cents`
//   holds estimates of jobs not yet reconciled; a generation is admitted by one conditional
//   UPDATE of this row, so concurrent requests cannot overshoot the cap together.
// - ai_budget_weeks: the weekly AI budget, one row per (workspace, budget key, week starting
//   Monday UTC). The key is a project id for personal brands and amplifiers, or `pool` for the
//   workspace pool that company pages draw from (docs/generation.md).
// - jobs gains what settlement needs: the reserved amount, the buckets it went to, the cost
//   actually incurred and when it was reconciled (null until then, so settling is idempotent).
// - posts.generation_job_id names the job that wrote a draft; unique, so one job can never
//   leave two drafts behind.
const ts = (t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ai_spend_days', (t) => {
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.date('bucket_date').notNullable();
    t.integer('spent_cents').notNullable().defaultTo(0);
    t.integer('reserved_cents').notNullable().defaultTo(0);
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'bucket_date']);
  });

  await knex.schema.createTable('ai_budget_weeks', (t) => {
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('budget_key', 40).notNullable();
    t.date('week_start').notNullable();
    t.integer('spent_cents').notNullable().defaultTo(0);
    t.integer('reserved_cents').notNullable().defaultTo(0);
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'budget_key', 'week_start']);
  });

  await knex.schema.alterTable('jobs', (t) => {
    t.integer('reserved_cents');
    t.date('spend_day');
    t.string('budget_key', 40);
    t.date('budget_week');
    t.integer('cost_cents').notNullable().defaultTo(0);
    ts(t, 'spend_settled_at');
  });
  // GET /v1/jobs filters by project and status inside a workspace, newest first.
  await knex.raw('create index jobs_workspace_project on jobs (workspace_id, project_id, created_at desc, id desc)');
  // The completion estimate reads the latest finished generations.
  await knex.raw(`create index jobs_done_recent on jobs (type, completed_at desc) where status = 'DONE'`);

  await knex.schema.alterTable('posts', (t) => {
    t.string('generation_job_id', 40);
  });
  await knex.raw('create unique index posts_generation_job on posts (generation_job_id) where generation_job_id is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists posts_generation_job');
  await knex.schema.alterTable('posts', (t) => t.dropColumn('generation_job_id'));
  await knex.raw('drop index if exists jobs_done_recent');
  await knex.raw('drop index if exists jobs_workspace_project');
  await knex.schema.alterTable('jobs', (t) => {
    for (const c of ['reserved_cents', 'spend_day', 'budget_key', 'budget_week', 'cost_cents', 'spend_settled_at']) t.dropColumn(c);
  });
  await knex.schema.dropTableIfExists('ai_budget_weeks');
  await knex.schema.dropTableIfExists('ai_spend_days');
}
