import type { Knex } from 'knex';

// The foundation data model (spec 2): workspaces, people, projects and their network
// connection, notes with calendar slots, posts, statuses, API keys, idempotency, jobs,
// and the transactional outbox of events (spec 6).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workspaces', (t) => {
    t.string('id', 40).primary();
    t.string('name', 200).notNullable().defaultTo('');
    t.string('plan', 40).notNullable();
    t.jsonb('feature_overrides').notNullable().defaultTo('{}');
    t.boolean('require_review_workflow').notNullable().defaultTo(false);
    // The agency whose plan pays for this workspace (spec 5.5), if any.
    t.string('billing_workspace_id', 40).references('workspaces.id').onDelete('SET NULL');
    t.string('ai_enforcement', 10).notNullable().defaultTo('block');
    t.integer('weekly_ai_budget_cents');
    t.integer('daily_spend_cap_cents');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('users', (t) => {
    t.string('id', 40).primary();
    t.string('email', 320).notNullable();
    t.string('name', 200).notNullable().defaultTo('');
    t.string('avatar_url', 1000);
    t.text('password_hash');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index users_email_lower on users (lower(email))');

  await knex.schema.createTable('network_connections', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('network_person_id', 200);
    t.string('display_name', 200);
    t.string('vanity_name', 200);
    t.string('picture_url', 1000);
    t.text('access_token_enc');
    t.text('refresh_token_enc');
    t.timestamp('access_token_expires_at', { useTz: true, precision: 3 });
    t.timestamp('refresh_token_expires_at', { useTz: true, precision: 3 });
    // spec 2.6: the raw stored cache, distinct from the derived `state`.
    t.string('connection_status', 20).notNullable().defaultTo('UNKNOWN');
    t.timestamp('last_validated_at', { useTz: true, precision: 3 });
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.timestamp('last_failure_at', { useTz: true, precision: 3 });
    t.string('last_error', 500);
    t.timestamp('revoked_at', { useTz: true, precision: 3 });
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id']);
  });

  await knex.schema.createTable('projects', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('type', 20).notNullable();
    t.string('slug', 200).notNullable();
    t.string('display_name', 200);
    t.string('username', 200);
    t.string('avatar_url', 1000);
    t.string('status', 20).notNullable().defaultTo('ACTIVE');
    t.string('timezone', 64).notNullable().defaultTo('UTC');
    t.string('language', 16).notNullable().defaultTo('en');
    // Company pages publish through the personal account they were linked to (spec 2.6).
    t.string('connection_id', 40).references('network_connections.id').onDelete('SET NULL');
    t.string('network_organization_id', 200);
    t.integer('current_streak');
    t.integer('longest_streak');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at', 'id']);
  });

  await knex.schema.createTable('memberships', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('user_id', 40).notNullable().references('users.id').onDelete('CASCADE');
    t.string('role', 60).notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.unique(['workspace_id', 'user_id']);
    t.index(['user_id']);
  });

  await knex.schema.createTable('membership_projects', (t) => {
    t.string('membership_id', 40).notNullable().references('memberships.id').onDelete('CASCADE');
    t.string('project_id', 40).notNullable().references('projects.id').onDelete('CASCADE');
    t.primary(['membership_id', 'project_id']);
  });

  await knex.schema.createTable('post_statuses', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('category', 20).notNullable();
    t.string('title', 120).notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.integer('position').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'category']);
  });
  // One default per category per workspace.
  await knex.raw('create unique index post_statuses_default on post_statuses (workspace_id, category) where is_default');

  await knex.schema.createTable('notes', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).notNullable().references('projects.id').onDelete('CASCADE');
    t.text('content').notNullable();
    t.string('folder_id', 40);
    t.string('client_id', 200);
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'project_id', 'created_at', 'id']);
  });
  await knex.raw('create unique index notes_client_id on notes (workspace_id, project_id, client_id) where client_id is not null');

  await knex.schema.createTable('posts', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).references('projects.id').onDelete('SET NULL');
    t.string('status', 30).notNullable();
    t.string('status_id', 40).references('post_statuses.id').onDelete('SET NULL');
    t.string('title', 500).notNullable().defaultTo('');
    // false once a human set the name: the service only names posts it may name (spec 4.4 PATCH title).
    t.boolean('title_auto').notNullable().defaultTo(true);
    t.text('content').notNullable();
    t.string('content_type', 30).notNullable().defaultTo('PERSONAL');
    t.timestamp('scheduled_at', { useTz: true, precision: 3 });
    // Bumped on every schedule change; the publish workflow fires only for the version it holds.
    t.integer('schedule_version').notNullable().defaultTo(0);
    t.timestamp('published_at', { useTz: true, precision: 3 });
    t.string('network_post_urn', 200);
    t.string('funnel_stage', 30);
    t.text('last_publish_error');
    t.timestamp('last_publish_attempt_at', { useTz: true, precision: 3 });
    t.jsonb('delivery');
    t.jsonb('review');
    t.jsonb('media');
    t.boolean('auto_like').notNullable().defaultTo(false);
    t.boolean('auto_comment').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 });
    t.timestamp('deleted_at', { useTz: true, precision: 3 });
    t.index(['workspace_id', 'project_id', 'created_at', 'id']);
    t.index(['status', 'scheduled_at']);
  });

  await knex.schema.createTable('calendar_slots', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).notNullable().references('projects.id').onDelete('CASCADE');
    t.timestamp('date', { useTz: true, precision: 3 }).notNullable();
    t.string('content_type', 30).notNullable().defaultTo('PERSONAL');
    t.string('note_id', 40).references('notes.id').onDelete('CASCADE');
    t.string('post_id', 40).references('posts.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.unique(['note_id']);
    t.unique(['post_id']);
    t.index(['workspace_id', 'project_id', 'date']);
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('name', 200).notNullable().defaultTo('');
    t.string('mode', 10).notNullable();
    t.string('key_hash', 64).notNullable().unique();
    t.string('last4', 4).notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamp('expires_at', { useTz: true, precision: 3 });
    t.timestamp('revoked_at', { useTz: true, precision: 3 });
    t.timestamp('last_used_at', { useTz: true, precision: 3 });
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id']);
  });

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.string('workspace_id', 40).notNullable();
    t.string('key', 64).notNullable();
    t.string('operation', 80).notNullable();
    t.string('request_hash', 64).notNullable();
    t.string('state', 12).notNullable(); // in_progress | done
    t.timestamp('locked_until', { useTz: true, precision: 3 });
    t.integer('response_status');
    t.jsonb('response_body');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'key']);
    t.index(['created_at']);
  });

  await knex.schema.createTable('jobs', (t) => {
    t.string('id', 40).primary();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40).references('projects.id').onDelete('SET NULL');
    t.string('type', 40).notNullable();
    t.string('status', 20).notNullable();
    t.jsonb('input').notNullable().defaultTo('{}');
    t.jsonb('progress');
    t.jsonb('result');
    t.string('error_code', 80);
    t.text('error_message');
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.integer('estimated_completion_ms').notNullable().defaultTo(0);
    t.string('created_by', 40);
    t.timestamp('started_at', { useTz: true, precision: 3 });
    t.timestamp('completed_at', { useTz: true, precision: 3 });
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at', 'id']);
  });

  // Transactional outbox (spec 6): written in the same transaction as the change that emits it.
  await knex.schema.createTable('outbox_events', (t) => {
    t.bigIncrements('seq').primary();
    t.string('id', 40).notNullable().unique();
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('project_id', 40);
    t.string('type', 60).notNullable();
    t.jsonb('data').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('dispatched_at', { useTz: true, precision: 3 });
    t.index(['dispatched_at', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'outbox_events',
    'jobs',
    'idempotency_keys',
    'api_keys',
    'calendar_slots',
    'posts',
    'notes',
    'post_statuses',
    'membership_projects',
    'memberships',
    'projects',
    'network_connections',
    'users',
    'workspaces',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
