import type { Knex } from 'knex';

// docs/generation.md "Lost starts": `workflow_started_at` is set once a job's workflow start has
// succeeded (by the API right after the start, or by the reconciler when it starts the workflow
// or finds it already there). The reconciler's pass then reads only QUEUED jobs whose start was
// never confirmed — one indexed query, and no Temporal call for a job that is merely waiting
// (paused job processing, a busy worker). Jobs queued before this column existed have it null:
// the next pass confirms each of them once (the start answers "already started").
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('jobs', (t) => {
    t.timestamp('workflow_started_at', { useTz: true, precision: 3 });
  });
  await knex.raw(`create index jobs_queued_unstarted on jobs (created_at) where status = 'QUEUED' and workflow_started_at is null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists jobs_queued_unstarted');
  await knex.schema.alterTable('jobs', (t) => {
    t.dropColumn('workflow_started_at');
  });
}
