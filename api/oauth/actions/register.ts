import type { Context, Next } from 'koa';
import { errors } from '../../../lib/errors';
import { consume } from '../../rateLimit';
import { clientFromMetadata, type NewClient } from '../clientMetadata';
import { presentClient } from '../../../lib/presenters/oauthClients';
import { findReRegistration, insertClient } from '../clients';
import type { OAuthEndpoint } from '../http';
import { oauthClientSchema, registrationMetadataSchema } from '../schema';

// POST /oauth/register: RFC 7591 dynamic registration of public clients (spec 5.3.1).
// Chain: throttle → metadata (clientMetadata.ts: the schema of api/oauth/schema.ts, which also
// refuses any auth method but "none" and any grant or response type of another flow; redirect
// URIs; grant and response types; scope; URIs shown to users; the same rules a Client ID
// Metadata Document is held to) → re-registration or insert.

/** Registration writes a row per call and needs no credential, so it is limited per address. */
async function throttleRegistration(ctx: Context, next: Next) {
  const rl = await consume('unauthenticated', `oauth-register:${ctx.ip}`);
  if (!rl.allowed) throw errors.rateLimited(rl, `Too many registrations from this address; retry in ${rl.retryAfter} s.`);
  await next();
}

async function checkMetadata(ctx: Context, next: Next) {
  ctx.state.register = clientFromMetadata(ctx.state.body);
  await next();
}

async function registerClient(ctx: Context) {
  const client = ctx.state.register as NewClient;
  const existing = await findReRegistration(client);
  ctx.status = 201;
  ctx.body = presentClient(existing ?? (await insertClient(client)));
}

export const registerEndpoint: OAuthEndpoint = {
  steps: [throttleRegistration, checkMetadata, registerClient],
  request: registrationMetadataSchema,
  response: oauthClientSchema,
  errors: ['invalid_request', 'invalid_client_metadata', 'invalid_scope', 'payload_too_large', 'unsupported_media_type', 'rate_limited'],
};
