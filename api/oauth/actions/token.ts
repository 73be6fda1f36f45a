import type { Context, Next } from 'koa';
import { findClient } from '../clients';
import { InvalidClient, InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from '../errors';
import { authorizationCodeGrant } from '../grantTypes/authorizationCode';
import { refreshTokenGrant } from '../grantTypes/refreshToken';
import { oauthState, type OAuthEndpoint } from '../http';
import { bodyParams } from '../params';
import { oauthTokenResponseSchema, tokenRequestSchema } from '../schema';

// POST /oauth/token (spec 5.3.4, 5.3.5). Chain: parameters → public client → grant type → grant.
// `resource` (RFC 8707 2.2) is checked by each grant against what it was granted for.
// Errors are ApiErrors rendered once by the REST boundary in the standard envelope (spec 7.3).

const GRANTS: Record<string, (ctx: Context) => Promise<void>> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
};

export async function readBodyParams(ctx: Context, next: Next) {
  Object.assign(oauthState(ctx), bodyParams(ctx));
  await next();
}

/**
 * spec 5.3.4: no client authentication; the client identifies itself with client_id. A client
 * that tries to authenticate anyway is refused rather than silently accepted (RFC 6749 2.3:
 * one authentication method per request, and these clients registered "none").
 */
export async function identifyPublicClient(ctx: Context, next: Next) {
  const st = oauthState(ctx);
  const authorization = ctx.get('authorization');
  if (authorization || st.params.client_secret || st.params.client_assertion) {
    // RFC 6749 5.2: an attempt through the Authorization header is answered with its scheme's challenge.
    const scheme = authorization.split(' ')[0];
    throw new InvalidClient(
      'Clients of this server are public and do not authenticate; send client_id only.',
      scheme ? { 'WWW-Authenticate': `${scheme} realm="oauth"` } : undefined,
    );
  }
  const clientId = st.params.client_id;
  if (!clientId) throw new InvalidRequest('client_id is required.');
  const client = await findClient(clientId, ctx.ip);
  if (!client) throw new InvalidClient('Unknown client_id.');
  st.client = client;
  await next();
}

async function checkGrantType(ctx: Context, next: Next) {
  const st = oauthState(ctx);
  const type = st.params.grant_type;
  if (!type) throw new InvalidRequest('grant_type is required.');
  if (!GRANTS[type]) throw new UnsupportedGrantType(`grant_type "${type}" is not supported; use authorization_code or refresh_token.`);
  if (!st.client!.grant_types.includes(type)) throw new UnauthorizedClient(`This client did not register the ${type} grant.`);
  await next();
}

async function runGrant(ctx: Context) {
  await GRANTS[oauthState(ctx).params.grant_type!]!(ctx);
}

export const tokenEndpoint: OAuthEndpoint = {
  steps: [readBodyParams, identifyPublicClient, checkGrantType, runGrant],
  request: tokenRequestSchema,
  response: oauthTokenResponseSchema,
  errors: [
    'invalid_request',
    'invalid_grant',
    'unauthorized_client',
    'unsupported_grant_type',
    'invalid_scope',
    'invalid_target',
    'invalid_client',
    'unsupported_media_type',
    // A client_id that is a URL: its metadata document is fetched under a per-address limit.
    'rate_limited',
  ],
};
