import type { Context, Next } from 'koa';
import { wireClientId } from '../clients';
import { InvalidRequest } from '../errors';
import { oauthState, type OAuthEndpoint } from '../http';
import { issuer } from '../metadata';
import { introspectionRequestSchema, oauthIntrospectionSchema, type OAuthIntrospection } from '../schema';
import { scopeString } from '../scopes';
import { findAccessTokenRow, findRefreshToken, looksLikeToken, ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX } from '../tokens';
import { readBodyParams } from './token';

// POST /oauth/introspect (spec 5.3.7; RFC 7662). Public: no client authentication. An
// inactive token (unknown, expired, revoked, rotated) is `{ active: false }` and nothing else,
// so the answer never says why (RFC 7662 2.2). An access token bound to one resource
// (RFC 8707) reports it as `aud`; a token valid for both resources carries no `aud`.

const INACTIVE: OAuthIntrospection = { active: false };
const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

async function requireToken(ctx: Context, next: Next) {
  if (!oauthState(ctx).params.token) throw new InvalidRequest('token is required.');
  await next();
}

async function describeAccessToken(token: string): Promise<OAuthIntrospection> {
  const row = await findAccessTokenRow(token);
  if (!row || row.revoked_at || row.expires_at.getTime() <= Date.now()) return INACTIVE;
  return {
    active: true,
    scope: scopeString(row.scopes),
    client_id: await wireClientId(row.client_id),
    sub: row.user_id,
    token_type: 'Bearer',
    exp: seconds(row.expires_at),
    iat: seconds(row.created_at),
    iss: issuer(),
    jti: row.id,
    workspace_id: row.workspace_id,
    ...(row.resource ? { aud: row.resource } : {}),
  };
}

async function describeRefreshToken(token: string): Promise<OAuthIntrospection> {
  const row = await findRefreshToken(token);
  if (!row || row.revoked_at || row.rotated_at || row.family.revoked_at || row.expires_at.getTime() <= Date.now()) return INACTIVE;
  return {
    active: true,
    scope: scopeString(row.family.scopes),
    client_id: await wireClientId(row.family.client_id),
    sub: row.family.user_id,
    token_type: 'refresh_token',
    exp: seconds(row.expires_at),
    iat: seconds(row.created_at),
    iss: issuer(),
    workspace_id: row.family.workspace_id,
  };
}

async function introspectToken(ctx: Context) {
  const token = oauthState(ctx).params.token!;
  // The prefix says which kind it is, so token_type_hint (RFC 7662 2.1) is never needed.
  if (looksLikeToken(token, ACCESS_TOKEN_PREFIX)) ctx.body = await describeAccessToken(token);
  else if (looksLikeToken(token, REFRESH_TOKEN_PREFIX)) ctx.body = await describeRefreshToken(token);
  else ctx.body = INACTIVE;
}

export const introspectEndpoint: OAuthEndpoint = {
  steps: [readBodyParams, requireToken, introspectToken],
  request: introspectionRequestSchema,
  response: oauthIntrospectionSchema,
  errors: ['invalid_request', 'unsupported_media_type'],
};
