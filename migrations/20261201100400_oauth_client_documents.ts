import type { Knex } from 'knex';

// OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; docs/oauth.md
// "Client ID Metadata Documents"). A client whose client_id is an HTTPS URL gets a row once a user
// first approves it, because grants, codes and tokens reference oauth_clients; the row's id is
// derived from the URL (api/oauth/clientDocuments.ts) and its metadata is a snapshot of the last
// document approved, for the operator's list. The document itself, not the row, is what every
// request is checked against. NULL for dynamically registered clients.
//
// A nullable column without a default: adding it does not rewrite the table.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_clients', (t) => {
    t.text('metadata_url').unique();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_clients', (t) => {
    t.dropColumn('metadata_url');
  });
}
