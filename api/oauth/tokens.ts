import { createHmac } from 'node:crypto';
import { OAUTH_INVALIDATION_CHANNEL, onLocalInvalidation } from '../../lib/auth/invalidation';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { newId, randomBase62 } from '../../lib/ids';
import { log } from '../../lib/logger';
import { newRedisConnection } from '../../lib/redis';
import {
  ACCESS_TOKEN_PREFIX,
  REFRESH_TOKEN_PREFIX,
  tokenHash,
  type AccessTokenRow,
  type FamilyRow,
  type RefreshTokenRow,
  type ResourceBinding,
} from '../../lib/oauth/tokens';
import type { OAuthTokenResponse } from './schema';
import { scopeString } from './scopes';

// Token storage (spec 5.3.4-5.3.8) is in lib/oauth/tokens.ts, which the operator tools use
// too; this module adds rotation, the token response and authentication with its cache.
export {
  ACCESS_TOKEN_PREFIX,
  createFamily,
  insertAccessToken,
  insertRefreshToken,
  issuesRefreshToken,
  looksLikeToken,
  randomToken,
  REFRESH_TOKEN_PREFIX,
  revokeFamilies,
  tokenHash,
  type AccessTokenRow,
  type FamilyRow,
  type FamilySeed,
  type RefreshTokenRow,
  type RevokeReason,
} from '../../lib/oauth/tokens';
export { publishTokenInvalidation } from '../../lib/auth/invalidation';

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

/** RFC 6749 5.1, with the scope always present (spec 5.2 rule 4: the expanded set). */
export function tokenResponse(access: { plaintext: string; row: AccessTokenRow }, refresh: string | null): OAuthTokenResponse {
  return {
    access_token: access.plaintext,
    token_type: 'Bearer',
    // spec 8: access tokens live 1 hour; the row's expiry is issuance + this (RFC 6749 5.1).
    expires_in: config.oauth.accessTokenTtlS,
    scope: scopeString(access.row.scopes),
    ...(refresh ? { refresh_token: refresh } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Authenticating access tokens
//
// Records are cached per process for config.authCacheMs (the bound API keys live with) and
// dropped at once, in every API process, when anything is revoked: the revoking process clears
// its own cache and publishes on a Redis channel the others listen on.

const accessCache = new Map<string, { row: AccessTokenRow | null; at: number }>();
onLocalInvalidation('accessTokens', () => accessCache.clear());
let subscriber: ReturnType<typeof newRedisConnection> | null = null;

function subscribeOnce(): void {
  if (subscriber) return;
  const sub = (subscriber = newRedisConnection());
  sub.subscribe(OAUTH_INVALIDATION_CHANNEL).catch((err) => log.warn('oauth invalidation subscribe failed', { err }));
  sub.on('message', () => accessCache.clear());
}

export function closeOAuthSubscriber(): void {
  subscriber?.disconnect();
  subscriber = null;
}

export function clearAccessTokenCache(): void {
  accessCache.clear();
}

export async function findAccessTokenRow(plaintext: string): Promise<AccessTokenRow | null> {
  return (
    ((await db()('oauth_access_tokens')
      .where({ token_hash: tokenHash(plaintext) })
      .first()) as AccessTokenRow | undefined) ?? null
  );
}

/** The live record of a presented access token, or null (unknown, revoked or expired). */
export async function activeAccessToken(plaintext: string): Promise<AccessTokenRow | null> {
  subscribeOnce();
  const hash = tokenHash(plaintext);
  const now = Date.now();
  let entry = accessCache.get(hash);
  if (!entry || now - entry.at > config.authCacheMs) {
    entry = {
      row: ((await db()('oauth_access_tokens').where({ token_hash: hash }).first()) as AccessTokenRow | undefined) ?? null,
      at: now,
    };
    accessCache.set(hash, entry);
    if (accessCache.size > 50_000) accessCache.delete(accessCache.keys().next().value as string);
  }
  const row = entry.row;
  if (!row || row.revoked_at || row.expires_at.getTime() <= now) return null;
  return row;
}

export async function findRefreshToken(plaintext: string): Promise<(RefreshTokenRow & { family: FamilyRow }) | null> {
  const row = await db()('oauth_refresh_tokens as r')
    .join('oauth_token_families as f', 'f.id', 'r.family_id')
    .where('r.token_hash', tokenHash(plaintext))
    .first('r.*', db().raw('row_to_json(f.*) as family'));
  if (!row) return null;
  const family = row.family as FamilyRow & { revoked_at: string | null; created_at: string };
  return {
    ...row,
    family: { ...family, revoked_at: family.revoked_at ? new Date(family.revoked_at) : null, created_at: new Date(family.created_at) },
  };
}

/**
 * Rotation as one statement (atomic without a transaction, one round trip): mark the presented
 * refresh token rotated only if nobody did so before, and in the same statement insert the new
 * access token and the new refresh token. Returns null when the token was already rotated or
 * revoked, i.e. when another request won.
 */
export async function rotateRefreshToken(
  presented: RefreshTokenRow & { family: FamilyRow },
  next: { access: string; refresh: string },
  scopes: string[],
  resource: ResourceBinding,
): Promise<AccessTokenRow | null> {
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
      refreshId,
      accessId,
      presentedId: presented.id,
      familyId: f.id,
      clientId: f.client_id,
      userId: f.user_id,
      workspaceId: f.workspace_id,
      defaultProjectId: f.default_project_id,
      scopes,
      resource,
      accessHash: tokenHash(next.access),
      refreshHash: tokenHash(next.refresh),
      accessTtl: config.oauth.accessTokenTtlS,
      // Sliding lifetime: each rotation starts a fresh one (the absolute lifetime is not set by spec 5.3.5).
      refreshExpires: new Date(now + config.oauth.refreshTokenTtlS * 1000),
    },
  );
  return (rows[0] as AccessTokenRow | undefined) ?? null;
}
