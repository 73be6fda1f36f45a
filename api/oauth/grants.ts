import { randomBytes } from 'node:crypto';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import type { ResourceBinding } from './resources';
import type { AccessLevel } from './scopes';
import { tokenHash } from './tokens';

// Revoking and listing a user's grants is in lib/oauth/grants.ts, which the operator tools use too.
export { revokeGrant, userGrants } from '../../lib/oauth/grants';

// Consents ("grants") and authorization codes (spec 5.3.2, 5.3.3).
//
// One live grant per (user, client) records the picks of the last approval: workspace,
// default project, access level, the requested set (the welcome-back key) and the granted
// set. Codes and token families copy what they need from it, so later approvals never change
// tokens already issued (spec 5.3.6: existing tokens are never widened).

export interface GrantRow {
  id: string;
  user_id: string;
  client_id: string;
  workspace_id: string;
  default_project_id: string | null;
  access_level: AccessLevel;
  requested_scopes: string[];
  scopes: string[];
  remembered: boolean;
  created_at: Date;
  updated_at: Date;
  revoked_at: Date | null;
}

export async function liveGrant(userId: string, clientId: string): Promise<GrantRow | undefined> {
  return (await db()('oauth_grants').where({ user_id: userId, client_id: clientId }).whereNull('revoked_at').first()) as
    GrantRow | undefined;
}

export interface Consent {
  userId: string;
  clientId: string;
  workspaceId: string;
  defaultProjectId: string | null;
  accessLevel: AccessLevel;
  requestedScopes: string[];
  scopes: string[];
}

/** Records an approval; the live grant of this user and client is updated in place. */
export async function saveConsent(c: Consent): Promise<GrantRow> {
  const fields = {
    workspace_id: c.workspaceId,
    default_project_id: c.defaultProjectId,
    access_level: c.accessLevel,
    requested_scopes: c.requestedScopes,
    scopes: c.scopes,
    remembered: true,
    updated_at: new Date(),
  };
  return db().transaction(async (trx) => {
    const existing = await trx('oauth_grants')
      .where({ user_id: c.userId, client_id: c.clientId })
      .whereNull('revoked_at')
      .forUpdate()
      .first('id');
    if (existing) {
      const [row] = await trx('oauth_grants').where({ id: existing.id }).update(fields).returning('*');
      return row as GrantRow;
    }
    const [row] = await trx('oauth_grants')
      .insert({ id: newId('oauthGrant'), user_id: c.userId, client_id: c.clientId, ...fields })
      .returning('*');
    return row as GrantRow;
  });
}

/** spec 5.3.5: after refresh-token reuse the approval is no longer remembered; the next /authorize asks again. */
export async function forgetConsent(grantId: string): Promise<void> {
  await db()('oauth_grants').where({ id: grantId }).update({ remembered: false, updated_at: new Date() });
}

// ---------------------------------------------------------------------------------------------
// Authorization codes

export interface CodeRow {
  code_hash: string;
  client_id: string;
  grant_id: string;
  user_id: string;
  workspace_id: string;
  default_project_id: string | null;
  redirect_uri: string;
  code_challenge: string;
  scopes: string[];
  expires_at: Date;
  consumed_at: Date | null;
  created_at: Date;
  /** RFC 8707: the resource of the authorization request; null = both (no indicator). */
  resource: ResourceBinding;
}

/**
 * spec 5.3.3: single use, config.oauth.codeTtlS (10 minutes), bound to client, redirect URI,
 * challenge and scope, and to the resource indicated at /oauth/authorize (RFC 8707 2.1).
 */
export async function issueCode(
  grant: GrantRow,
  redirectUri: string,
  codeChallenge: string,
  resource: ResourceBinding = null,
): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await db()('oauth_codes').insert({
    code_hash: tokenHash(code),
    client_id: grant.client_id,
    grant_id: grant.id,
    user_id: grant.user_id,
    workspace_id: grant.workspace_id,
    default_project_id: grant.default_project_id,
    redirect_uri: redirectUri,
    code_challenge: codeChallenge,
    scopes: grant.scopes,
    resource,
    expires_at: new Date(Date.now() + config.oauth.codeTtlS * 1000),
  });
  return code;
}
