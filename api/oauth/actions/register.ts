import type { Context, Next } from 'koa';
import { errors } from '../../../lib/errors';
import { consume } from '../../rateLimit';
import { findReRegistration, insertClient, presentClient, redirectUriProblem, type NewClient } from '../clients';
import { InvalidClientMetadata } from '../errors';
import { REGISTRABLE_GRANT_TYPES, registrationMetadataSchema, type RegistrationMetadata as Metadata } from '../schema';
import { parseScope, scopeString } from '../scopes';

// POST /oauth/register: RFC 7591 dynamic registration of public clients (spec 5.3.1).
// Chain: throttle → parse metadata (the schema of api/oauth/schema.ts, which also refuses any
// auth method but "none" and any grant or response type of another flow) → redirect URIs →
// grant and response types → scope → URIs shown to users → re-registration or insert.

interface RegisterState {
  metadata: Metadata;
  client: NewClient;
}
const reg = (ctx: Context) => ctx.state.register as RegisterState;

/** Registration writes a row per call and needs no credential, so it is limited per address. */
async function throttleRegistration(ctx: Context, next: Next) {
  const rl = await consume('unauthenticated', `oauth-register:${ctx.ip}`);
  if (!rl.allowed) throw errors.rateLimited(rl, `Too many registrations from this address; retry in ${rl.retryAfter} s.`);
  await next();
}

async function parseMetadata(ctx: Context, next: Next) {
  const body = ctx.state.body as unknown;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidClientMetadata('The registration request must be a JSON object (RFC 7591 3.1).');
  const parsed = registrationMetadataSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidClientMetadata(`\`${issue.path.join('.') || 'body'}\`: ${issue.message}`);
  }
  ctx.state.register = { metadata: parsed.data, client: {} as NewClient } satisfies RegisterState;
  await next();
}

async function checkRedirectUris(ctx: Context, next: Next) {
  const uris = reg(ctx).metadata.redirect_uris;
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InvalidClientMetadata(`redirect_uris[${i}] ${problem}.`);
  });
  reg(ctx).client.redirect_uris = [...new Set(uris)];
  await next();
}

/**
 * The schema has refused every other flow; when grant_types is omitted the client gets both
 * (RFC 7591 3.2.1 lets the server substitute values; the response says what was registered).
 */
async function grantAndResponseTypes(ctx: Context, next: Next) {
  const { metadata, client } = reg(ctx);
  client.grant_types = [...new Set(metadata.grant_types ?? REGISTRABLE_GRANT_TYPES)];
  client.response_types = [...new Set(metadata.response_types ?? ['code' as const])];
  await next();
}

/** spec 5.3.1: unknown scope tokens fail with invalid_scope. */
async function checkScope(ctx: Context, next: Next) {
  const { metadata, client } = reg(ctx);
  client.scope = metadata.scope ? scopeString([...new Set(parseScope(metadata.scope))]) || null : null;
  await next();
}

function displayUriProblem(uri: string): string | null {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname)) return null;
  return 'must be an https URL';
}

/** client_uri and logo_uri end up on the consent page. */
async function checkDisplayMetadata(ctx: Context, next: Next) {
  const { metadata, client } = reg(ctx);
  for (const field of ['client_uri', 'logo_uri'] as const) {
    const value = metadata[field];
    const problem = value ? displayUriProblem(value) : null;
    if (problem) throw new InvalidClientMetadata(`${field} ${problem}.`);
    client[field] = value || null;
  }
  client.client_name = (metadata.client_name ?? '').trim();
  client.software_id = metadata.software_id || null;
  client.software_version = metadata.software_version || null;
  await next();
}

async function registerClient(ctx: Context) {
  const { client } = reg(ctx);
  const existing = await findReRegistration(client);
  ctx.status = 201;
  ctx.body = presentClient(existing ?? (await insertClient(client)));
}

export const registerEndpoint = [
  throttleRegistration,
  parseMetadata,
  checkRedirectUris,
  grantAndResponseTypes,
  checkScope,
  checkDisplayMetadata,
  registerClient,
];
