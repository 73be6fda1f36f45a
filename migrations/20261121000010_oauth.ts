import type { Knex } from 'knex';

// The OAuth 2.1 authorization server (spec 5.3) and multi-workspace reach (spec 5.5).
//
// - oauth_clients: dynamically registered public clients (RFC 7591); no secrets.
// - oauth_grants: one live consent per (user, client): the picks made on the consent page and
//   the exact scope list granted. Tokens copy the list at issuance and never re-expand it
//   (spec 5.2 rule 3), so a scope added to an alias later is never gained by old consents.
// - oauth_codes / oauth_token_families / oauth_access_tokens / oauth_refresh_tokens: every
//   secret is stored as its SHA-256 only. A family is everything issued from one code; it is
//   the unit that code reuse and refresh-token reuse revoke.
// - agency_owners: the users who own an agency workspace, reaching the client workspaces
//   billed to it (workspaces.billing_workspace_id) with reach `agency_owner`.
const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oauth_clients', (t) => {
    t.string('id', 40).primary();
    t.string('client_name', 200).notNullable().defaultTo('');
    t.string('client_uri', 2000);
    t.string('logo_uri', 2000);
    t.specificType('redirect_uris', 'text[]').notNullable();
    // As registered (space-separated); null = no restriction beyond the vocabulary.
    t.text('scope');
    t.specificType('grant_types', 'text[]').notNullable();
    t.specificType('response_types', 'text[]').notNullable();
    t.string('token_endpoint_auth_method', 40).notNullable().defaultTo('none');
    t.string('software_id', 200);
    t.string('software_version', 200);
    // Shown on the consent page: dynamically registered clients are "unverified" until an operator vouches for them.
    t.boolean('trusted').notNullable().defaultTo(false);
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.index(['software_id', 'software_version']);
  });

  await knex.schema.createTable('oauth_grants', (t) => {
    t.string('id', 40).primary();
    t.string('user_id', 40).notNullable().references('users.id').onDelete('CASCADE');
    t.string('client_id', 40).notNullable().references('oauth_clients.id').onDelete('CASCADE');
    t.string('workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('default_project_id', 40).references('projects.id').onDelete('SET NULL');
    t.string('access_level', 10).notNullable(); // read | full
    // The expanded requested set: the key of the welcome-back page (spec 5.3.2).
    t.specificType('requested_scopes', 'text[]').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    // false after refresh-token reuse: the approval is no longer remembered (spec 5.3.5).
    t.boolean('remembered').notNullable().defaultTo(true);
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'revoked_at');
    t.index(['user_id']);
  });
  await knex.raw('create unique index oauth_grants_live on oauth_grants (user_id, client_id) where revoked_at is null');

  await knex.schema.createTable('oauth_codes', (t) => {
    t.string('code_hash', 64).primary();
    t.string('client_id', 40).notNullable().references('oauth_clients.id').onDelete('CASCADE');
    t.string('grant_id', 40).notNullable().references('oauth_grants.id').onDelete('CASCADE');
    t.string('user_id', 40).notNullable();
    t.string('workspace_id', 40).notNullable();
    t.string('default_project_id', 40);
    t.text('redirect_uri').notNullable();
    t.string('code_challenge', 128).notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    ts(t, 'expires_at').notNullable();
    ts(t, 'consumed_at');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at']);
  });

  await knex.schema.createTable('oauth_token_families', (t) => {
    t.string('id', 40).primary();
    t.string('grant_id', 40).notNullable().references('oauth_grants.id').onDelete('CASCADE');
    t.string('client_id', 40).notNullable();
    t.string('user_id', 40).notNullable();
    t.string('workspace_id', 40).notNullable();
    t.string('default_project_id', 40);
    t.specificType('scopes', 'text[]').notNullable();
    t.string('code_hash', 64);
    ts(t, 'revoked_at');
    t.string('revoked_reason', 40);
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.index(['grant_id']);
    t.index(['code_hash']);
  });

  await knex.schema.createTable('oauth_access_tokens', (t) => {
    t.string('id', 40).primary();
    t.string('token_hash', 64).notNullable().unique();
    t.string('family_id', 40).notNullable().references('oauth_token_families.id').onDelete('CASCADE');
    // Denormalised from the family so that authenticating a request is one indexed read.
    t.string('client_id', 40).notNullable();
    t.string('user_id', 40).notNullable();
    t.string('workspace_id', 40).notNullable();
    t.string('default_project_id', 40);
    t.specificType('scopes', 'text[]').notNullable();
    ts(t, 'expires_at').notNullable();
    ts(t, 'revoked_at');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.index(['family_id']);
  });

  await knex.schema.createTable('oauth_refresh_tokens', (t) => {
    t.string('id', 40).primary();
    t.string('token_hash', 64).notNullable().unique();
    t.string('family_id', 40).notNullable().references('oauth_token_families.id').onDelete('CASCADE');
    // The access token issued together with this refresh token (the pair a grace replay returns).
    t.string('access_token_id', 40).notNullable();
    t.string('parent_id', 40);
    t.string('replaced_by', 40);
    ts(t, 'expires_at').notNullable();
    ts(t, 'rotated_at');
    ts(t, 'revoked_at');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.index(['family_id']);
  });

  await knex.schema.createTable('agency_owners', (t) => {
    t.string('agency_workspace_id', 40).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('user_id', 40).notNullable().references('users.id').onDelete('CASCADE');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.primary(['agency_workspace_id', 'user_id']);
    t.index(['user_id']);
  });
  await knex.raw(
    'create index if not exists workspaces_billing_workspace on workspaces (billing_workspace_id) where billing_workspace_id is not null',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists workspaces_billing_workspace');
  for (const table of [
    'agency_owners',
    'oauth_refresh_tokens',
    'oauth_access_tokens',
    'oauth_token_families',
    'oauth_codes',
    'oauth_grants',
    'oauth_clients',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
