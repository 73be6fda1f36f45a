import type { Knex } from 'knex';

// A job that reaches a final status says so: `NOTIFY jobs_ended, '<job id>'`, sent on the
// commit of whichever statement ended it (the worker's final UPDATE, a cancel, the reconciler,
// an operator). The API processes that wait for a job (wait_for_completion_ms, MCP tasks/result;
// lib/jobs/ended.ts) wake on it instead of polling the row, and read the row again to answer.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function jobs_ended_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('jobs_ended', new.id);
      return null;
    end $$`);
  await knex.raw(`
    create trigger jobs_ended_notify after update of status on jobs for each row
    when (new.status in ('DONE', 'FAILED', 'CANCELLED') and old.status is distinct from new.status)
    execute function jobs_ended_notify()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists jobs_ended_notify on jobs');
  await knex.raw('drop function if exists jobs_ended_notify()');
}
