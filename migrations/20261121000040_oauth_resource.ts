import type { Knex } from 'knex';

// Resource indicators (RFC 8707) for the OAuth authorization server (spec 5.3; docs/oauth.md).
//
// `resource` holds the canonical identifier of the one resource server (config.publicUrl for
// REST, config.mcpPublicUrl for MCP) a code, a token family or an access token is bound to.
// NULL means both: what a request without the parameter gets, and what every row issued before
// this migration keeps, so existing tokens go on working where they did.
//
// - oauth_codes: the resource of the authorization request (RFC 8707 2.1).
// - oauth_token_families: the resource granted; refreshes may get access tokens for it only.
// - oauth_access_tokens: the audience checked by the bearer resolver on every request; it may
//   be narrower than its family's (a token request naming one resource of an unbound grant).
//
// Nullable columns without a default: adding them does not rewrite the tables.
const TABLES = ['oauth_codes', 'oauth_token_families', 'oauth_access_tokens'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.text('resource');
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('resource');
    });
  }
}
