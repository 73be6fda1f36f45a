import { onLocalInvalidation } from '../../lib/auth/invalidation';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import type { OAuthClient } from './schema';

// Registered clients (RFC 7591) and the redirect-URI rules of spec 5.3.1 and RFC 8252.

/** A registered client: what it registered with (NewClient, below) plus what the server set. */
export interface ClientRow extends NewClient {
  id: string;
  /** spec 5.3.1: public clients only (insertClient). */
  token_endpoint_auth_method: 'none';
  trusted: boolean;
  created_at: Date;
}

// Clients never change after registration except for the operator's trust flag, so a short
// per-process cache spares the token endpoint a read per request. Misses are not cached.
const CACHE_MS = 30_000;
const cache = new Map<string, { row: ClientRow; at: number }>();

export async function findClient(clientId: string): Promise<ClientRow | undefined> {
  const hit = cache.get(clientId);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.row;
  if (!/^cli_[A-Za-z0-9]{1,60}$/.test(clientId)) return undefined;
  const row = (await db()('oauth_clients').where({ id: clientId }).first()) as ClientRow | undefined;
  if (row) {
    cache.set(clientId, { row, at: Date.now() });
    if (cache.size > 10_000) cache.delete(cache.keys().next().value as string);
  }
  return row;
}

onLocalInvalidation('client', (clientId) => forgetClient(clientId));

export function forgetClient(clientId: string): void {
  cache.delete(clientId);
}

export interface NewClient {
  client_name: string;
  client_uri: string | null;
  logo_uri: string | null;
  redirect_uris: string[];
  scope: string | null;
  grant_types: string[];
  response_types: string[];
  software_id: string | null;
  software_version: string | null;
}

/**
 * spec 5.3.1: the same software_id + software_version with the same redirect URIs is the same
 * client. The existing registration is returned unchanged, so that nobody can rename or widen
 * a client by registering it again.
 */
export async function findReRegistration(input: NewClient): Promise<ClientRow | undefined> {
  if (!input.software_id || !input.software_version) return undefined;
  const candidates = (await db()('oauth_clients')
    .where({ software_id: input.software_id, software_version: input.software_version })
    .orderBy('created_at', 'asc')) as ClientRow[];
  const wanted = [...new Set(input.redirect_uris)].sort();
  return candidates.find((c) => {
    const have = [...new Set(c.redirect_uris)].sort();
    return have.length === wanted.length && have.every((u, i) => u === wanted[i]);
  });
}

export async function insertClient(input: NewClient): Promise<ClientRow> {
  const id = newId('oauthClient');
  const [row] = await db()('oauth_clients')
    .insert({ id, ...input, token_endpoint_auth_method: 'none' })
    .returning('*');
  return row as ClientRow;
}

export function presentClient(c: ClientRow): OAuthClient {
  return {
    client_id: c.id,
    client_id_issued_at: Math.floor(c.created_at.getTime() / 1000),
    client_name: c.client_name || undefined,
    client_uri: c.client_uri ?? undefined,
    logo_uri: c.logo_uri ?? undefined,
    redirect_uris: c.redirect_uris,
    scope: c.scope ?? undefined,
    grant_types: c.grant_types,
    response_types: c.response_types,
    token_endpoint_auth_method: c.token_endpoint_auth_method,
    software_id: c.software_id ?? undefined,
    software_version: c.software_version ?? undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Redirect URIs

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const LOOPBACK_IPS = new Set(['127.0.0.1', '[::1]']);
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

function withoutPort(u: URL): string {
  return `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
}

/**
 * spec 5.3.2 / RFC 6749 3.1.2.3: exact string match, except that a registered loopback IP
 * redirect accepts any port at request time (RFC 8252 7.3: native apps bind an ephemeral port).
 * `localhost` gets no such allowance: RFC 8252 8.3 prefers the IP literal.
 */
export function redirectUriMatches(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  let p: URL;
  try {
    p = new URL(presented);
  } catch {
    return false;
  }
  if (p.protocol !== 'http:' || !LOOPBACK_IPS.has(p.hostname) || p.username || p.password || presented.includes('#')) return false;
  return registered.some((r) => {
    let u: URL;
    try {
      u = new URL(r);
    } catch {
      return false;
    }
    return u.protocol === 'http:' && LOOPBACK_IPS.has(u.hostname) && withoutPort(u) === withoutPort(p);
  });
}

/** The host shown on the consent page: where the code will be sent. */
export function redirectHost(uri: string): string {
  try {
    const u = new URL(uri);
    return u.host || `${u.protocol}${u.pathname}`.slice(0, 100);
  } catch {
    return uri.slice(0, 100);
  }
}
