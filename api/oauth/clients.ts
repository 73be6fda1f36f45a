import { onLocalInvalidation } from '../../lib/auth/invalidation';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { documentClient, documentClientId, isClientIdUrl } from './clientDocuments';
import type { NewClient } from './clientMetadata';

// Clients: registered ones (RFC 7591) and those identified by a Client ID Metadata Document
// (clientDocuments.ts); the redirect-URI rules of spec 5.3.2 and RFC 8252.

export type { NewClient } from './clientMetadata';

/** A client: what it registered with, or what its document says (NewClient), plus what the server set. */
export interface ClientRow extends NewClient {
  id: string;
  /** spec 5.3.1: public clients only (insertClient, clientFromMetadata). */
  token_endpoint_auth_method: 'none';
  trusted: boolean;
  created_at: Date;
  /**
   * The Client Identifier URL of a client known by its metadata document: its client_id on the
   * wire, while `id` keys its grants, codes and tokens. Null for a registered client.
   */
  metadata_url: string | null;
}

// Registered clients never change after registration except for the operator's trust flag, so
// a short per-process cache spares the token endpoint a read per request. Misses are not cached.
const CACHE_MS = 30_000;
const cache = new Map<string, { row: ClientRow; at: number }>();

/** The stored row of a client by its internal id, whichever kind it is. */
async function storedClient(id: string): Promise<ClientRow | undefined> {
  const hit = cache.get(id);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.row;
  if (!/^cli_[A-Za-z0-9]{1,60}$/.test(id)) return undefined;
  const row = (await db()('oauth_clients').where({ id }).first()) as ClientRow | undefined;
  if (row) {
    cache.set(id, { row, at: Date.now() });
    if (cache.size > 10_000) cache.delete(cache.keys().next().value as string);
  }
  return row;
}

/**
 * The client a request names with its client_id: a Client Identifier URL is resolved through
 * its metadata document (fetched or cached, validated; InvalidClient when that fails), anything
 * else is a registered `cli_` id (`requester`, the caller's address, is charged for a document
 * fetch: clientDocuments.ts). A document client's own row is never reachable by its internal
 * id, so presenting that id cannot skip the document.
 */
export async function findClient(clientId: string, requester?: string): Promise<ClientRow | undefined> {
  if (isClientIdUrl(clientId)) {
    const metadata = await documentClient(clientId, requester);
    const id = documentClientId(clientId);
    const stored = await storedClient(id);
    return {
      ...metadata,
      id,
      token_endpoint_auth_method: 'none',
      trusted: stored?.trusted ?? false,
      created_at: stored?.created_at ?? new Date(),
      metadata_url: clientId,
    };
  }
  const row = await storedClient(clientId);
  return row && !row.metadata_url ? row : undefined;
}

/** The client_id a client knows itself by: its Client Identifier URL, else its registered id. */
export async function wireClientId(id: string): Promise<string> {
  return (await storedClient(id))?.metadata_url ?? id;
}

/**
 * A document client gets its row when a user first approves it (grants, codes and tokens
 * reference oauth_clients); later approvals refresh the snapshot the operator's list shows.
 * The operator's trust flag is kept.
 */
export async function storeDocumentClient(client: ClientRow): Promise<void> {
  if (!client.metadata_url) return;
  const snapshot: NewClient = {
    client_name: client.client_name,
    client_uri: client.client_uri,
    logo_uri: client.logo_uri,
    redirect_uris: client.redirect_uris,
    scope: client.scope,
    grant_types: client.grant_types,
    response_types: client.response_types,
    software_id: client.software_id,
    software_version: client.software_version,
  };
  await db()('oauth_clients')
    .insert({ id: client.id, metadata_url: client.metadata_url, token_endpoint_auth_method: 'none', ...snapshot })
    .onConflict('id')
    .merge(Object.keys(snapshot));
  forgetClient(client.id);
}

onLocalInvalidation('client', (clientId) => forgetClient(clientId));

export function forgetClient(clientId: string): void {
  cache.delete(clientId);
}

/**
 * spec 5.3.1: the same software_id + software_version with the same redirect URIs is the same
 * client. The existing registration is returned unchanged, so that nobody can rename or widen
 * a client by registering it again. Document clients are not registrations.
 */
export async function findReRegistration(input: NewClient): Promise<ClientRow | undefined> {
  if (!input.software_id || !input.software_version) return undefined;
  const candidates = (await db()('oauth_clients')
    .where({ software_id: input.software_id, software_version: input.software_version })
    .whereNull('metadata_url')
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

// ---------------------------------------------------------------------------------------------
// Redirect URIs

const LOOPBACK_IPS = new Set(['127.0.0.1', '[::1]']);

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
