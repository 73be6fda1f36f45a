import type { Knex } from 'knex';

// The idea board (spec 2.9, 3.3, 4.6): creative briefs per project.
//
// - `status` stores only the writable values (`inbox`, `in_production`); `review` and `done`
//   are derived at read time from the linked post (docs/ideas.md), so they can never be stale.
// - `linked_post_id` is the draft written from the idea (generation from an idea links it) or
//   any post linked later; a removed post unlinks (SET NULL) and the idea reads its stored status.
// - `scheduled_for` is date-level calendar placement (a `date`, no time of day).
const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ideas', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).notNullable().references('projects.id').onDelete('CASCADE');
    t.string('title', 500).notNullable().defaultTo('');
    t.text('content').notNullable().defaultTo('');
    t.string('pillar', 200);
    t.string('post_type', 200);
    t.string('asset_format', 200);
    t.string('hook', 1000);
    t.string('topic', 500);
    t.date('scheduled_for');
    t.string('status', 20).notNullable().defaultTo('inbox');
    t.string('linked_post_id', 40).references('posts.id').onDelete('SET NULL');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'project_id', 'created_at', 'id']);
    // The calendar reads ideas of a project by date.
    t.index(['project_id', 'scheduled_for']);
    t.index(['linked_post_id']);
  });
  await knex.raw(`alter table ideas add constraint ideas_status_writable check (status in ('inbox', 'in_production'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ideas');
}
