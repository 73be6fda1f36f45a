import { createHmac, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { config } from '../../lib/config';
import { sha256Hex } from '../../lib/crypto';
import { db } from '../../lib/db';
import { newId, randomBase62 } from '../../lib/ids';
import { log } from '../../lib/logger';
import { newRedisConnection, redis } from '../../lib/redis';
import type { ResourceBinding } from './resources';
import { scopeString } from './scopes';

// Token storage (spec 5.3.4-5.3.8). Plaintext exists only in the response that hands it out:
// rows hold SHA-256 digests of 256-bit random values, which makes a digest lookup safe (an
// unguessable preimage, so no timing oracle over the index) and a database leak useless.
//
// A family is everything issued from one authorization code: the first pair and every pair
// rotated from it. Code reuse and refresh-token reuse revoke a family; revoking a grant
// revokes all of its families.

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

export function tokenHash(value: string): string {
  return sha256Hex(value);
}

function derive(parent: string, purpose: string): string {
  return createHmac('sha256', `${config.secretKey}:oauth-rotation:${purpose}`).update(parent).digest('base64url');
}

/**
 * spec 5.3.5: a replay of the same refresh token within the grace window returns the same new
 * pair. Rather than keeping that pair's plaintext around (even encrypted), the pair issued on
 * rotation is a keyed function of the refresh token that was rotated: the server can compute it
 * again from the replayed token, and nobody without the server key can compute it at all.
 * The root pair of a family (from the code exchange) is random.
 */
export function rotatedPair(parentRefreshToken: string): { access: string; refresh: string } {
  return {
    access: ACCESS_TOKEN_PREFIX + derive(parentRefreshToken, 'access'),
    refresh: REFRESH_TOKEN_PREFIX + derive(parentRefreshToken, 'refresh'),
  };
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
  id: string; grant_id: string; client_id: string; user_id: string; workspace_id: string; default_project_id: string | null;
  scopes: string[]; code_hash: string | null; revoked_at: Date | null; revoked_reason: string | null; created_at: Date;
  resource: ResourceBinding;
}

export interface AccessTokenRow {
  id: string; token_hash: string; family_id: string; client_id: string; user_id: string; workspace_id: string;
  default_project_id: string | null; scopes: string[]; expires_at: Date; revoked_at: Date | null; created_at: Date;
  /** RFC 8707: the one resource this token may be used at; null = both. */
  resource: ResourceBinding;
}

export interface RefreshTokenRow {
  id: string; token_hash: string; family_id: string; access_token_id: string; parent_id: string | null; replaced_by: string | null;
  expires_at: Date; rotated_at: Date | null; revoked_at: Date | null; created_at: Date;
}

export async function createFamily(trx: Knex.Transaction, seed: FamilySeed): Promise<FamilyRow> {
  const [row] = await trx('oauth_token_families').insert({
    id: `tfam_${randomBase62(24)}`, grant_id: seed.grantId, client_id: seed.clientId, user_id: seed.userId, workspace_id: seed.workspaceId,
    default_project_id: seed.defaultProjectId, scopes: seed.scopes, code_hash: seed.codeHash, resource: seed.resource,
  }).returning('*');
  return row as FamilyRow;
}

/** `resource` may be narrower than the family's (RFC 8707 2.2), never wider. */
export async function insertAccessToken(trx: Knex.Transaction, family: FamilyRow, plaintext: string, scopes: string[], resource: ResourceBinding = family.resource): Promise<AccessTokenRow> {
  const [row] = await trx('oauth_access_tokens').insert({
    id: newId('oauthToken'), token_hash: tokenHash(plaintext), family_id: family.id, client_id: family.client_id, user_id: family.user_id,
    workspace_id: family.workspace_id, default_project_id: family.default_project_id, scopes, resource,
    // On the database's clock, like created_at: the stored lifetime is exactly the one announced.
    expires_at: trx.raw('now() + make_interval(secs => ?)', [config.oauth.accessTokenTtlS]),
  }).returning('*');
  return row as AccessTokenRow;
}

export async function insertRefreshToken(trx: Knex.Transaction, familyId: string, plaintext: string, accessTokenId: string, parentId: string | null): Promise<RefreshTokenRow> {
  const [row] = await trx('oauth_refresh_tokens').insert({
    id: `ort_${randomBase62(24)}`, token_hash: tokenHash(plaintext), family_id: familyId, access_token_id: accessTokenId, parent_id: parentId,
    // Sliding lifetime: each rotation starts a fresh one (the absolute lifetime is not set by spec 5.3.5).
    expires_at: new Date(Date.now() + config.oauth.refreshTokenTtlS * 1000),
  }).returning('*');
  return row as RefreshTokenRow;
}

/** RFC 6749 5.1, with the scope always present (spec 5.2 rule 4: the expanded set). */
export function tokenResponse(access: { plaintext: string; row: AccessTokenRow }, refresh: string | null) {
  return {
    access_token: access.plaintext,
    token_type: 'Bearer' as const,
    // spec 8: access tokens live 1 hour; the row's expiry is issuance + this (RFC 6749 5.1).
    expires_in: config.oauth.accessTokenTtlS,
    scope: scopeString(access.row.scopes),
    ...(refresh ? { refresh_token: refresh } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Revocation

export type RevokeReason = 'code_reuse' | 'refresh_reuse' | 'revoked_by_client' | 'grant_revoked';

/** Revokes whole families: the family row and every token in it, in the caller's transaction. */
export async function revokeFamilies(trx: Knex | Knex.Transaction, familyIds: string[], reason: RevokeReason): Promise<number> {
  if (familyIds.length === 0) return 0;
  const now = new Date();
  const n = await trx('oauth_token_families').whereIn('id', familyIds).whereNull('revoked_at').update({ revoked_at: now, revoked_reason: reason });
  await trx('oauth_access_tokens').whereIn('family_id', familyIds).whereNull('revoked_at').update({ revoked_at: now });
  await trx('oauth_refresh_tokens').whereIn('family_id', familyIds).whereNull('revoked_at').update({ revoked_at: now });
  return n;
}

// ---------------------------------------------------------------------------------------------
// Authenticating access tokens
//
// Records are cached per process for config.authCacheMs (the bound API keys live with) and
// dropped at once, in every API process, when anything is revoked: the revoking process clears
// its own cache and publishes on a Redis channel the others listen on.

const INVALIDATION_CHANNEL = 'oauth:invalidate';
const accessCache = new Map<string, { row: AccessTokenRow | null; at: number }>();
let subscriber: ReturnType<typeof newRedisConnection> | null = null;

function subscribeOnce(): void {
  if (subscriber) return;
  const sub = (subscriber = newRedisConnection());
  sub.subscribe(INVALIDATION_CHANNEL).catch((err) => log.warn('oauth invalidation subscribe failed', { err }));
  sub.on('message', () => accessCache.clear());
}

export function closeOAuthSubscriber(): void {
  subscriber?.disconnect();
  subscriber = null;
}

export async function publishTokenInvalidation(reason: string): Promise<void> {
  accessCache.clear();
  try {
    await redis().publish(INVALIDATION_CHANNEL, reason);
  } catch (err) {
    // Other processes then converge within config.authCacheMs.
    log.warn('oauth invalidation publish failed', { err, reason });
  }
}

export function clearAccessTokenCache(): void {
  accessCache.clear();
}

export async function findAccessTokenRow(plaintext: string): Promise<AccessTokenRow | null> {
  return ((await db()('oauth_access_tokens').where({ token_hash: tokenHash(plaintext) }).first()) as AccessTokenRow | undefined) ?? null;
}

/** The live record of a presented access token, or null (unknown, revoked or expired). */
export async function activeAccessToken(plaintext: string): Promise<AccessTokenRow | null> {
  subscribeOnce();
  const hash = tokenHash(plaintext);
  const now = Date.now();
  let entry = accessCache.get(hash);
  if (!entry || now - entry.at > config.authCacheMs) {
    entry = { row: ((await db()('oauth_access_tokens').where({ token_hash: hash }).first()) as AccessTokenRow | undefined) ?? null, at: now };
    accessCache.set(hash, entry);
    if (accessCache.size > 50_000) accessCache.delete(accessCache.keys().next().value as string);
  }
  const row = entry.row;
  if (!row || row.revoked_at || row.expires_at.getTime() <= now) return null;
  return row;
}

export async function findRefreshToken(plaintext: string): Promise<(RefreshTokenRow & { family: FamilyRow }) | null> {
  const row = await db()('oauth_refresh_tokens as r').join('oauth_token_families as f', 'f.id', 'r.family_id')
    .where('r.token_hash', tokenHash(plaintext))
    .first('r.*', db().raw('row_to_json(f.*) as family'));
  if (!row) return null;
  const family = row.family as FamilyRow & { revoked_at: string | null; created_at: string };
  return { ...row, family: { ...family, revoked_at: family.revoked_at ? new Date(family.revoked_at) : null, created_at: new Date(family.created_at) } };
}

/**
 * Rotation as one statement (atomic without a transaction, one round trip): mark the presented
 * refresh token rotated only if nobody did so before, and in the same statement insert the new
 * access token and the new refresh token. Returns null when the token was already rotated or
 * revoked, i.e. when another request won.
 */
export async function rotateRefreshToken(presented: RefreshTokenRow & { family: FamilyRow }, next: { access: string; refresh: string }, scopes: string[], resource: ResourceBinding): Promise<AccessTokenRow | null> {
  const f = presented.family;
  const accessId = newId('oauthToken');
  const refreshId = `ort_${randomBase62(24)}`;
  const now = Date.now();
  const { rows } = await db().raw(
    `with won as (
       update oauth_refresh_tokens set rotated_at = now(), replaced_by = :refreshId
        where id = :presentedId and rotated_at is null and revoked_at is null
       returning id),
     access as (
       insert into oauth_access_tokens (id, token_hash, family_id, client_id, user_id, workspace_id, default_project_id, scopes, resource, expires_at)
       select :accessId, :accessHash, :familyId, :clientId, :userId, :workspaceId, :defaultProjectId, :scopes::text[], :resource::text, now() + make_interval(secs => :accessTtl) from won
       returning *),
     refresh as (
       insert into oauth_refresh_tokens (id, token_hash, family_id, access_token_id, parent_id, expires_at)
       select :refreshId, :refreshHash, :familyId, :accessId, :presentedId, :refreshExpires from won
       returning id)
     select access.* from access, refresh`,
    {
      refreshId, accessId, presentedId: presented.id, familyId: f.id, clientId: f.client_id, userId: f.user_id, workspaceId: f.workspace_id,
      defaultProjectId: f.default_project_id, scopes, resource, accessHash: tokenHash(next.access), refreshHash: tokenHash(next.refresh),
      accessTtl: config.oauth.accessTokenTtlS,
      // Sliding lifetime: each rotation starts a fresh one (the absolute lifetime is not set by spec 5.3.5).
      refreshExpires: new Date(now + config.oauth.refreshTokenTtlS * 1000),
    },
  );
  return (rows[0] as AccessTokenRow | undefined) ?? null;
}
