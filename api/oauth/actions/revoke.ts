import type { Context, Next } from 'koa';
import { db } from '../../../lib/db';
import { findClient } from '../clients';
import { InvalidClient, InvalidRequest } from '../errors';
import { oauthState, type OAuthEndpoint } from '../http';
import { revocationRequestSchema } from '../schema';
import {
  findAccessTokenRow,
  findRefreshToken,
  looksLikeToken,
  publishTokenInvalidation,
  revokeFamilies,
  ACCESS_TOKEN_PREFIX,
  REFRESH_TOKEN_PREFIX,
} from '../tokens';
import { readBodyParams } from './token';

// POST /oauth/revoke (spec 5.3.8; RFC 7009). client_id is required (400 invalid_request
// without it, 401 invalid_client for an unknown one). Once the client is known the answer is
// always 200 with an empty body (RFC 7009 2.2: an unknown or foreign token is not an error,
// and saying otherwise would let anyone probe tokens). A client revokes only its own tokens;
// a refresh token takes its whole family with it, an access token only itself.

async function identifyClient(ctx: Context, next: Next) {
  const st = oauthState(ctx);
  if (!st.params.client_id) throw new InvalidRequest('client_id is required.');
  const client = await findClient(st.params.client_id, ctx.ip);
  if (!client) throw new InvalidClient('Unknown client_id.');
  st.client = client;
  await next();
}

async function revokeToken(ctx: Context) {
  const { params, client } = oauthState(ctx);
  const token = params.token ?? '';
  if (looksLikeToken(token, ACCESS_TOKEN_PREFIX)) {
    const row = await findAccessTokenRow(token);
    if (row && row.client_id === client!.id && !row.revoked_at) {
      await db()('oauth_access_tokens').where({ id: row.id }).whereNull('revoked_at').update({ revoked_at: new Date() });
      await publishTokenInvalidation(`revoke:${row.id}`);
    }
  } else if (looksLikeToken(token, REFRESH_TOKEN_PREFIX)) {
    const row = await findRefreshToken(token);
    if (row && row.family.client_id === client!.id) {
      await db().transaction((trx) => revokeFamilies(trx, [row.family_id], 'revoked_by_client'));
      await publishTokenInvalidation(`revoke-family:${row.family_id}`);
    }
  }
  ctx.status = 200;
  ctx.body = '';
  ctx.state.handled = true;
}

export const revokeEndpoint: OAuthEndpoint = {
  steps: [readBodyParams, identifyClient, revokeToken],
  request: revocationRequestSchema,
  // RFC 7009 2.2: an empty 200, whatever the token.
  errors: ['invalid_request', 'invalid_client', 'unsupported_media_type', 'rate_limited'],
};
