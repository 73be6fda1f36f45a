import type { Context } from 'koa';
import { config } from '../../../lib/config';
import { constantTimeEqual } from '../../../lib/crypto';
import { db } from '../../../lib/db';
import { InvalidGrant, InvalidScope } from '../errors';
import { forgetConsent } from '../grants';
import { oauthState } from '../http';
import { required } from '../params';
import { narrowBinding, type ResourceBinding } from '../resources';
import { expandScopes, isSubset, parseScope } from '../scopes';
import {
  findRefreshToken,
  looksLikeToken,
  publishTokenInvalidation,
  revokeFamilies,
  rotatedPair,
  rotateRefreshToken,
  tokenHash,
  tokenResponse,
  REFRESH_TOKEN_PREFIX,
  type AccessTokenRow,
  type FamilyRow,
  type RefreshTokenRow,
} from '../tokens';

// grant_type=refresh_token (spec 5.3.5; RFC 6749 6; OAuth 2.1 4.3.1 rotation for public clients).
//
// - Every use rotates: the presented token is marked rotated by an UPDATE ... WHERE
//   rotated_at IS NULL in the same statement that inserts the new pair (tokens.ts
//   rotateRefreshToken), so concurrent uses of one token produce one new pair.
// - The new pair is a keyed function of the rotated token (tokens.ts rotatedPair), so a
//   replay of that token within config.oauth.refreshGraceS gets the very same pair back
//   without any plaintext having been stored.
// - Any other presentation of a rotated token is reuse: the whole family is revoked and the
//   remembered consent dropped, so the user must approve again (spec 5.3.5).
// - `scope` may narrow the new access token; the refresh token keeps the family's scope
//   (RFC 6749 6: a new refresh token has the scope of the one it replaces).
// - `resource` may likewise pick one of the family's resources for the new access token
//   (RFC 8707 2.2); anything else is invalid_target. Without it the access token gets the
//   family's binding. A grace replay returns the pair as it was first issued.

type Presented = RefreshTokenRow & { family: FamilyRow };

function accessScopes(family: FamilyRow, scopeParam: string | undefined): string[] {
  if (scopeParam === undefined) return family.scopes;
  const asked = expandScopes(parseScope(scopeParam));
  // spec 5.3.6: never wider than what was granted; widening needs a new /authorize round.
  if (!isSubset(asked, family.scopes))
    throw new InvalidScope('The requested scope exceeds the scope granted; widening needs a new authorization.');
  return family.scopes.filter((s) => asked.includes(s));
}

async function rotate(presented: Presented, plaintext: string, scopes: string[], resource: ResourceBinding) {
  const pair = rotatedPair(plaintext);
  const access = await rotateRefreshToken(presented, pair, scopes, resource);
  return access ? tokenResponse({ plaintext: pair.access, row: access }, pair.refresh) : null;
}

/** The pair issued when `plaintext` was rotated, if it may be handed out again now. */
async function graceReplay(presentedId: string, plaintext: string) {
  const row = (await db()('oauth_refresh_tokens').where({ id: presentedId }).first()) as RefreshTokenRow;
  const family = (await db()('oauth_token_families').where({ id: row.family_id }).first()) as FamilyRow;
  if (!row.rotated_at || !row.replaced_by || family.revoked_at) return null;
  if (Date.now() - row.rotated_at.getTime() > config.oauth.refreshGraceS * 1000) return null;
  const child = (await db()('oauth_refresh_tokens').where({ id: row.replaced_by }).first()) as RefreshTokenRow | undefined;
  // Once the new refresh token has itself been used or revoked, the old one has no business coming back.
  if (!child || child.rotated_at || child.revoked_at) return null;
  const access = (await db()('oauth_access_tokens').where({ id: child.access_token_id }).first()) as AccessTokenRow | undefined;
  if (!access || access.revoked_at) return null;
  const pair = rotatedPair(plaintext);
  if (!constantTimeEqual(tokenHash(pair.refresh), child.token_hash) || !constantTimeEqual(tokenHash(pair.access), access.token_hash))
    return null;
  return tokenResponse({ plaintext: pair.access, row: access }, pair.refresh);
}

async function punishReuse(family: FamilyRow): Promise<never> {
  await db().transaction((trx) => revokeFamilies(trx, [family.id], 'refresh_reuse'));
  await forgetConsent(family.grant_id);
  await publishTokenInvalidation(`refresh-reuse:${family.id}`);
  throw new InvalidGrant(
    'The refresh token was already used. Every token of this authorization is revoked; the user must authorize again.',
  );
}

export async function refreshTokenGrant(ctx: Context): Promise<void> {
  const { params, client, resources } = oauthState(ctx);
  const plaintext = required(params, 'refresh_token');
  if (!looksLikeToken(plaintext, REFRESH_TOKEN_PREFIX)) throw new InvalidGrant('The refresh token is unknown.');
  const presented = await findRefreshToken(plaintext);
  if (!presented) throw new InvalidGrant('The refresh token is unknown.');
  // RFC 6749 6: bound to the client it was issued to.
  if (presented.family.client_id !== client!.id) throw new InvalidGrant('The refresh token was issued to another client.');
  if (presented.family.revoked_at || presented.revoked_at) throw new InvalidGrant('The refresh token has been revoked.');
  if (presented.expires_at.getTime() <= Date.now()) throw new InvalidGrant('The refresh token has expired.');
  const scopes = accessScopes(presented.family, params.scope);
  // Before rotating: a request for a resource outside the grant leaves the token usable.
  const resource = narrowBinding(presented.family.resource, resources);

  if (!presented.rotated_at) {
    const issued = await rotate(presented, plaintext, scopes, resource);
    if (issued) {
      ctx.body = issued;
      return;
    }
  }
  const replay = await graceReplay(presented.id, plaintext);
  if (replay) {
    ctx.body = replay;
    return;
  }
  await punishReuse(presented.family);
}
