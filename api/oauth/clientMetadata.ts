import { InvalidClientMetadata } from './errors';
import { REGISTRABLE_GRANT_TYPES, registrationMetadataSchema } from './schema';
import { parseScope, scopeString } from './scopes';
import type { StoredClient } from '../../lib/presenters/oauthClients';

// The client metadata of RFC 7591 2 as this server accepts it (spec 5.3.1), wherever it comes
// from: a registration request (actions/register.ts) or a Client ID Metadata Document
// (clientDocuments.ts). One set of rules, so a client cannot get through a document what
// registration would refuse.

/** What a client is, as the server keeps and shows it (without what it is given when stored). */
export type NewClient = Omit<StoredClient, 'id' | 'created_at' | 'token_endpoint_auth_method'>;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Schemes that would run code or read local data in the browser instead of reaching an app. */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'about:',
  'blob:',
  'filesystem:',
  'view-source:',
  'ws:',
  'wss:',
  'ftp:',
  'mailto:',
  'chrome:',
  'chrome-extension:',
]);

/**
 * spec 5.3.1: HTTPS, http on a loopback host for development (RFC 8252 7.3), or a private-use
 * scheme for native apps (RFC 8252 7.1). RFC 6749 3.1.2: absolute, without a fragment.
 * Returns why the URI is refused, or null.
 */
export function redirectUriProblem(raw: string): string | null {
  if (raw.length > 2000) return 'is longer than 2000 characters';
  if (raw.includes('#')) return 'must not contain a fragment (RFC 6749 3.1.2)';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'is not an absolute URI';
  }
  if (u.username || u.password) return 'must not carry user information';
  if (u.protocol === 'https:') return u.hostname ? null : 'has no host';
  if (u.protocol === 'http:')
    return LOOPBACK_HOSTS.has(u.hostname) ? null : 'must use https (plain http is allowed only for localhost and loopback addresses)';
  if (FORBIDDEN_SCHEMES.has(u.protocol)) return `uses the ${u.protocol} scheme, which cannot be a redirect target`;
  if (!/^[a-z][a-z0-9+.-]*:$/.test(u.protocol)) return 'has an invalid scheme';
  return null;
}

/** client_uri and logo_uri end up on the consent page. */
function displayUriProblem(uri: string): string | null {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname)) return null;
  return 'must be an https URL';
}

/**
 * Parses and checks RFC 7591 metadata: the schema (which refuses any auth method but "none"
 * and any grant or response type of another flow), the redirect URIs, the scope and the URIs
 * shown to users. Omitted grant types become both (RFC 7591 3.2.1 lets the server substitute
 * values). Throws InvalidClientMetadata naming the first problem.
 */
export function clientFromMetadata(input: unknown): NewClient {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new InvalidClientMetadata('The client metadata must be a JSON object (RFC 7591 2).');
  const parsed = registrationMetadataSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidClientMetadata(`\`${issue.path.join('.') || 'body'}\`: ${issue.message}`);
  }
  const metadata = parsed.data;
  metadata.redirect_uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InvalidClientMetadata(`redirect_uris[${i}] ${problem}.`);
  });
  const display: Pick<NewClient, 'client_uri' | 'logo_uri'> = { client_uri: null, logo_uri: null };
  for (const field of ['client_uri', 'logo_uri'] as const) {
    const value = metadata[field];
    const problem = value ? displayUriProblem(value) : null;
    if (problem) throw new InvalidClientMetadata(`${field} ${problem}.`);
    display[field] = value || null;
  }
  return {
    client_name: (metadata.client_name ?? '').trim(),
    ...display,
    redirect_uris: [...new Set(metadata.redirect_uris)],
    // spec 5.3.1: unknown scope tokens fail with invalid_scope at /oauth/authorize.
    scope: metadata.scope ? scopeString([...new Set(parseScope(metadata.scope))]) || null : null,
    grant_types: [...new Set(metadata.grant_types ?? REGISTRABLE_GRANT_TYPES)],
    response_types: [...new Set(metadata.response_types ?? ['code' as const])],
    software_id: metadata.software_id || null,
    software_version: metadata.software_version || null,
  };
}
