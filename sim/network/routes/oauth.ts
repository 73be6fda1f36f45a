// The network's token endpoints (docs/network-protocol.md, `POST /oauth/v2/accessToken` and
// `POST /oauth/v2/introspectToken`): form-encoded requests with client credentials, RFC 6749
// error bodies.

import type { IncomingMessage } from 'node:http';
import { mediaTypeOf, oauthError, type SimResponse } from '../responses';
import { DEFAULT_ACCESS_TTL_S } from '../state';
import type { Routes, SimContext } from './common';

const SCOPES = 'openid profile w_member_social w_organization_social r_organization_admin';

function parseForm(req: IncomingMessage, body: Buffer): { form: URLSearchParams } | { error: SimResponse } {
  if (mediaTypeOf(req) !== 'application/x-www-form-urlencoded')
    return { error: oauthError(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded') };
  return { form: new URLSearchParams(body.toString('utf8')) };
}

function checkClient(ctx: SimContext, params: URLSearchParams): SimResponse | null {
  if (params.get('client_id') !== ctx.clientId || params.get('client_secret') !== ctx.clientSecret) {
    return oauthError(401, 'invalid_client', 'Client authentication failed');
  }
  return null;
}

export const oauthRoutes: Routes = {
  'POST /oauth/v2/accessToken': {
    operation: 'refresh',
    style: 'oauth',
    handle: (ctx, req, _url, body) => {
      const parsed = parseForm(req, body);
      if ('error' in parsed) return parsed.error;
      const { form } = parsed;
      const grantType = form.get('grant_type');
      if (grantType === null) return oauthError(400, 'invalid_request', 'grant_type is required');
      if (grantType !== 'refresh_token') return oauthError(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported here`);
      const clientError = checkClient(ctx, form);
      if (clientError) return clientError;
      const refreshToken = form.get('refresh_token');
      if (!refreshToken) return oauthError(400, 'invalid_request', 'refresh_token is required');
      const s = ctx.state;
      const grant = s.grantsByRefresh.get(refreshToken);
      const now = Date.now();
      // One answer for unknown, revoked and expired, as RFC 6749 prescribes: invalid_grant.
      if (!grant || grant.revoked || grant.refreshExpiresAt === null || now >= grant.refreshExpiresAt) {
        return oauthError(400, 'invalid_grant', 'The provided authorization grant or refresh token is invalid, expired or revoked');
      }
      // A fresh access token each time; the refresh token itself is not rotated and keeps its
      // original expiry (the network's behaviour), and earlier access tokens stay valid until
      // their own expiry, so two workers refreshing at once do not invalidate each other.
      const access = s.mintAccessToken(grant, DEFAULT_ACCESS_TTL_S, now);
      s.counts.refreshes++;
      return {
        status: 200,
        body: {
          access_token: access,
          expires_in: DEFAULT_ACCESS_TTL_S,
          refresh_token: grant.refreshToken,
          refresh_token_expires_in: Math.max(0, Math.floor((grant.refreshExpiresAt - now) / 1000)),
          scope: SCOPES,
          token_type: 'Bearer',
        },
      };
    },
  },
  'POST /oauth/v2/introspectToken': {
    operation: 'introspect',
    style: 'oauth',
    handle: (ctx, req, _url, body) => {
      const parsed = parseForm(req, body);
      if ('error' in parsed) return parsed.error;
      const { form } = parsed;
      const clientError = checkClient(ctx, form);
      if (clientError) return clientError;
      const token = form.get('token');
      if (!token) return oauthError(400, 'invalid_request', 'token is required');
      const rec = ctx.state.accessTokens.get(token);
      if (!rec) return { status: 200, body: { active: false } };
      const status = rec.grant.revoked ? 'revoked' : Date.now() >= rec.expiresAt ? 'expired' : 'active';
      return {
        status: 200,
        body: {
          active: status === 'active',
          status,
          client_id: ctx.clientId,
          authorized_at: Math.floor(rec.grant.createdAt / 1000),
          created_at: Math.floor(rec.createdAt / 1000),
          expires_at: Math.floor(rec.expiresAt / 1000),
          scope: SCOPES,
          auth_type: '3L',
        },
      };
    },
  },
};
