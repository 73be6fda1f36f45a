import type { Knex } from 'knex';

// Outbound webhooks (spec 2.14, 3.5, 4.8, 6).
//
// - webhook_endpoints: the receiver, its subscriptions and its signing secret. The secret is
//   stored encrypted (not hashed) because the worker must sign with it; the plaintext is shown
//   on create and rotate only. `previous_secret_enc` keeps signing during an optional rotation
//   overlap. `consecutive_failures` is the spec 6 rule 3 streak, updated by single atomic
//   statements so concurrent deliveries cannot lose an increment. Deleting an endpoint is soft
//   (secret wiped) so that deliveries still in flight end recorded, never silently dropped.
// - webhook_deliveries: one row per (event, endpoint), the unit of "delivered or permanently
//   failed with a reason". The unique pair mirrors the workflow id `webhook-<event>-<endpoint>`.
// - webhook_delivery_attempts: what happened at each try (time, status, latency, error, the
//   address actually connected to), for operators.
// - a statement trigger on outbox_events NOTIFYs the relay so it need not wait for its poll.
const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    // A project-bound endpoint must never widen to the whole workspace, so it goes with its project.
    t.string('project_id', 40).references('projects.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.string('name', 200).notNullable().defaultTo('');
    t.specificType('events', 'text[]').notNullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.text('disabled_reason');
    ts(t, 'disabled_at');
    t.text('secret_enc');
    t.string('secret_last4', 4).notNullable();
    t.text('previous_secret_enc');
    ts(t, 'previous_secret_expires_at');
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    ts(t, 'last_success_at');
    ts(t, 'last_failure_at');
    t.string('created_by', 40);
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'deleted_at');
    t.index(['workspace_id', 'created_at', 'id']);
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('endpoint_id', 40).notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.string('event_id', 40).notNullable();
    t.string('event_type', 60).notNullable();
    ts(t, 'event_created_at').notNullable();
    // pending | retrying | delivered | failed
    t.string('status', 12).notNullable();
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.text('last_error');
    t.text('failure_reason');
    ts(t, 'next_attempt_at');
    ts(t, 'delivered_at');
    ts(t, 'failed_at');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    t.unique(['event_id', 'endpoint_id']);
    t.index(['endpoint_id', 'created_at', 'id']);
  });

  await knex.schema.createTable('webhook_delivery_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.string('delivery_id', 40).notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    ts(t, 'started_at').notNullable();
    t.integer('duration_ms').notNullable();
    t.integer('status_code');
    // delivered | failed | refused (DNS or address policy, spec 6 rule 3)
    t.string('outcome', 12).notNullable();
    t.text('error');
    t.string('remote_address', 64);
    t.unique(['delivery_id', 'attempt']);
  });

  await knex.raw(`
    create or replace function outbox_events_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('outbox_events', '');
      return null;
    end $$`);
  await knex.raw(
    'create trigger outbox_events_notify after insert on outbox_events for each statement execute function outbox_events_notify()',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists outbox_events_notify on outbox_events');
  await knex.raw('drop function if exists outbox_events_notify()');
  for (const table of ['webhook_delivery_attempts', 'webhook_deliveries', 'webhook_endpoints']) {
    await knex.schema.dropTableIfExists(table);
  }
}
