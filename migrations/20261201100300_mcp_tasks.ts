import type { Knex } from 'knex';

// MCP tasks (MCP 2025-11-25 "Tasks"; docs/mcp.md "Tasks"): a task is a job seen by the
// credential that asked for it. The job row and its workflow hold the state; this row only
// binds the job to that credential's subject in its workspace (the spec's "bind tasks to the
// authorization context") and records the lifetime the task was granted. A job two credentials
// reached (the same file sent by both, an idempotent replay) is a task of each.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mcp_tasks', (t) => {
    // The task id is the job id.
    t.string('id', 40).notNullable().references('jobs.id').onDelete('CASCADE');
    t.text('subject').notNullable();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('tool').notNullable();
    t.integer('ttl_ms').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['id', 'subject']);
    // tasks/list: one subject's tasks of one workspace, newest first (api/pagination.ts keyset).
    t.index(['workspace_id', 'subject', 'created_at', 'id'], 'mcp_tasks_list');
    t.index(['expires_at'], 'mcp_tasks_expiry');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mcp_tasks');
}
