import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { config } from '../config';
import { sha256Hex } from '../crypto';
import { newId, randomBase62 } from '../ids';

// OAuth token storage (spec 5.3.4-5.3.8), shared by the authorization server (api/oauth) and
// the operator tools. Plaintext exists only in the response that hands it out: rows hold
// SHA-256 digests of 256-bit random values, which makes a digest lookup safe (an unguessable
// preimage, so no timing oracle over the index) and a database leak useless.
//
// A family is everything issued from one authorization code: the first pair and every pair
// rotated from it. Code reuse and refresh-token reuse revoke a family; revoking a grant
// revokes all of its families.

/** RFC 8707: the one resource a token may be used at; null = both. */
export type ResourceBinding = string | null;

export const ACCESS_TOKEN_PREFIX = 'svc_oat_';
/** Not named by the spec; a distinct prefix lets secret scanners and our own parser tell the two apart. */
export const REFRESH_TOKEN_PREFIX = 'svc_ort_';
const TOKEN_SHAPE = /^svc_o(at|rt)_[A-Za-z0-9_-]{43}$/;

export function looksLikeToken(value: string, prefix: string): boolean {
  return value.startsWith(prefix) && TOKEN_SHAPE.test(value);
}

export function randomToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** spec 5.3.4: a refresh token only with `offline_access`, to a client registered for the refresh_token grant. */
export function issuesRefreshToken(scopes: readonly string[], clientGrantTypes: readonly string[]): boolean {
  return scopes.includes('offline_access') && clientGrantTypes.includes('refresh_token');
}

export function tokenHash(value: string): string {
  return sha256Hex(value);
}

export interface FamilySeed {
  grantId: string;
  clientId: string;
  userId: string;
  workspaceId: string;
  defaultProjectId: string | null;
  scopes: string[];
  codeHash: string | null;
  /** RFC 8707: the resource(s) granted (the code's); its refresh tokens get access tokens for these only. */
  resource: ResourceBinding;
}

export interface FamilyRow {
  id: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  workspace_id: string;
  default_project_id: string | null;
  scopes: string[];
  code_hash: string | null;
  revoked_at: Date | null;
  revoked_reason: string | null;
  created_at: Date;
  resource: ResourceBinding;
}

export interface AccessTokenRow {
  id: string;
  token_hash: string;
  family_id: string;
  client_id: string;
  user_id: string;
  workspace_id: string;
  default_project_id: string | null;
  scopes: string[];
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
  /** RFC 8707: the one resource this token may be used at; null = both. */
  resource: ResourceBinding;
}

export interface RefreshTokenRow {
  id: string;
  token_hash: string;
  family_id: string;
  access_token_id: string;
  parent_id: string | null;
  replaced_by: string | null;
  expires_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

export async function createFamily(trx: Knex.Transaction, seed: FamilySeed): Promise<FamilyRow> {
  const [row] = await trx('oauth_token_families')
    .insert({
      id: `tfam_${randomBase62(24)}`,
      grant_id: seed.grantId,
      client_id: seed.clientId,
      user_id: seed.userId,
      workspace_id: seed.workspaceId,
      default_project_id: seed.defaultProjectId,
      scopes: seed.scopes,
      code_hash: seed.codeHash,
      resource: seed.resource,
    })
    .returning('*');
  return row as FamilyRow;
}

/**
 * `resource` may be narrower than the family's (RFC 8707 2.2), never wider. `ttlS` is the
 * configured lifetime (spec 8: 1 hour) except for operator-minted tokens (`oauth token --expires-in`).
 */
export async function insertAccessToken(
  trx: Knex.Transaction,
  family: FamilyRow,
  plaintext: string,
  scopes: string[],
  resource: ResourceBinding = family.resource,
  ttlS: number = config.oauth.accessTokenTtlS,
): Promise<AccessTokenRow> {
  const [row] = await trx('oauth_access_tokens')
    .insert({
      id: newId('oauthToken'),
      token_hash: tokenHash(plaintext),
      family_id: family.id,
      client_id: family.client_id,
      user_id: family.user_id,
      workspace_id: family.workspace_id,
      default_project_id: family.default_project_id,
      scopes,
      resource,
      // On the database's clock, like created_at: the stored lifetime is exactly the one announced.
      expires_at: trx.raw('now() + make_interval(secs => ?)', [ttlS]),
    })
    .returning('*');
  return row as AccessTokenRow;
}

export async function insertRefreshToken(
  trx: Knex.Transaction,
  familyId: string,
  plaintext: string,
  accessTokenId: string,
  parentId: string | null,
): Promise<RefreshTokenRow> {
  const [row] = await trx('oauth_refresh_tokens')
    .insert({
      id: `ort_${randomBase62(24)}`,
      token_hash: tokenHash(plaintext),
      family_id: familyId,
      access_token_id: accessTokenId,
      parent_id: parentId,
      // Sliding lifetime: each rotation starts a fresh one (the absolute lifetime is not set by spec 5.3.5).
      expires_at: new Date(Date.now() + config.oauth.refreshTokenTtlS * 1000),
    })
    .returning('*');
  return row as RefreshTokenRow;
}

// ---------------------------------------------------------------------------------------------
// Revocation

export type RevokeReason = 'code_reuse' | 'refresh_reuse' | 'revoked_by_client' | 'grant_revoked';

/** Revokes whole families: the family row and every token in it, in the caller's transaction. */
export async function revokeFamilies(trx: Knex | Knex.Transaction, familyIds: string[], reason: RevokeReason): Promise<number> {
  if (familyIds.length === 0) return 0;
  const now = new Date();
  const n = await trx('oauth_token_families')
    .whereIn('id', familyIds)
    .whereNull('revoked_at')
    .update({ revoked_at: now, revoked_reason: reason });
  await trx('oauth_access_tokens').whereIn('family_id', familyIds).whereNull('revoked_at').update({ revoked_at: now });
  await trx('oauth_refresh_tokens').whereIn('family_id', familyIds).whereNull('revoked_at').update({ revoked_at: now });
  return n;
}
