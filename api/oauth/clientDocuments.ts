import { config } from '../../lib/config';
import { errors } from '../../lib/errors';
import { sha256Hex } from '../../lib/crypto';
import { log } from '../../lib/logger';
import { freshSeconds } from '../../lib/outbound/freshness';
import { FetchError, guardedFetch, type FetchedPage } from '../../lib/outbound/guardedFetch';
import { systemResolver } from '../../lib/outbound/resolve';
import { redis } from '../../lib/redis';
import { consume } from '../rateLimit';
import { clientFromMetadata, type NewClient } from './clientMetadata';
import { InvalidClient, OAuthError } from './errors';

// OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, "the
// draft"; MCP authorization, client registration): a client_id that is a URL names the JSON
// document the client publishes there, which stands in for a registration. The document is
// fetched under the outbound guard of user-given URLs (lib/outbound/guardedFetch.ts: resolved
// addresses vetted and pinned, one deadline, one size cap), never through a redirect, checked
// against the URL and the rules registration applies (clientMetadata.ts), and cached in Redis
// for its HTTP freshness clamped to a floor and a ceiling. Failures and invalid documents are
// never cached (draft 5.2), and refuse the request as invalid_client.

/** A client_id in URL form is a Client Identifier URL; a registered one is `cli_…` and never starts so (draft 7.1). */
export function isClientIdUrl(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

/**
 * The internal id of a document client's row (clients.ts storeDocumentClient), derived from
 * the URL so every process agrees on it without a lookup. 144 bits of SHA-256.
 */
export function documentClientId(url: string): string {
  return `cli_${sha256Hex(url).slice(0, 36)}`;
}

/** The host of the Client Identifier URL: what the consent page names (draft 8.5, phishing). */
export function documentHost(url: string): string {
  return new URL(url).host;
}

/**
 * draft 3: https, no user information, a path (not `/`, as the MCP SDK also requires), no
 * dot segments, no fragment. Not normalised: the URL is compared as a string (RFC 3986 6.2.1).
 * With allowDevUrls (config), plain http too.
 */
function clientIdUrlProblem(raw: string, allowDevUrls: boolean): string | null {
  if (raw.length > 2000) return 'is longer than 2000 characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && !(allowDevUrls && url.protocol === 'http:')) return 'must use https';
  if (url.username || url.password) return 'must not contain user information';
  if (raw.includes('#')) return 'must not contain a fragment';
  // The path as written: the URL parser would already have removed its dot segments.
  const path = raw.replace(/^[a-z]+:\/\/[^/?#]*/i, '').split('?')[0]!;
  if (path === '' || path === '/') return 'must have a path (a document at the root of a site is not accepted)';
  if (path.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) return 'must not contain "." or ".." path segments';
  return null;
}

const cacheKey = (url: string) => `oauth:cimd:${sha256Hex(url)}`;

/** One fetch per URL at a time in this process; concurrent requests for it share the answer. */
const inFlight = new Map<string, Promise<NewClient>>();

/**
 * The validated metadata of the client whose client_id is `url`: from the cache while fresh,
 * else fetched and checked. Throws InvalidClient saying what is wrong with the URL or the document.
 * `requester` (the caller's address) pays for a fetch: any unauthenticated request can name a
 * URL, so each address may cause only as many fetches a minute as the unauthenticated limit.
 */
export async function documentClient(url: string, requester?: string): Promise<NewClient> {
  const cached = await redis().get(cacheKey(url));
  if (cached) return JSON.parse(cached) as NewClient;
  let pending = inFlight.get(url);
  if (!pending) {
    if (requester) {
      const rl = await consume('unauthenticated', `oauth-cimd:${requester}`);
      if (!rl.allowed)
        throw errors.rateLimited(rl, `Too many client metadata documents fetched for this address; retry in ${rl.retryAfter} s.`);
    }
    pending = fetchDocument(url).finally(() => inFlight.delete(url));
    inFlight.set(url, pending);
  }
  return pending;
}

/** Seconds the cached document of `url` has left; null when none is cached. */
export async function cachedDocumentTtl(url: string): Promise<number | null> {
  const ttl = await redis().ttl(cacheKey(url));
  return ttl >= 0 ? ttl : null;
}

/**
 * The fetch failure as the unauthenticated requester may read it: which kind of address was
 * refused, but not the address a name resolved to (that would make the authorization endpoint a
 * resolver of this network's internal names).
 */
function publicReason(err: FetchError): string {
  if (err.code === 'url_refused')
    return `the host is on a ${/a (\w+) address$/.exec(err.message)?.[1] ?? 'refused'} address, which is not fetched.`;
  if (err.code === 'url_dns_failed') return 'the host did not resolve.';
  return err.message;
}

const refused = (why: string) => new InvalidClient(`The client's metadata document at this client_id ${why}`);

async function fetchDocument(url: string): Promise<NewClient> {
  const opts = config.oauthClientDocuments;
  const problem = clientIdUrlProblem(url, opts.allowDevUrls);
  if (problem) throw new InvalidClient(`The client_id URL ${problem} (draft-ietf-oauth-client-id-metadata-document 3).`);
  let page: FetchedPage;
  try {
    page = await guardedFetch(url, {
      // draft 8.6: never special-use addresses; loopback only for local development and tests.
      allowLoopback: opts.allowDevUrls,
      allowHttp: opts.allowDevUrls,
      timeoutMs: opts.timeoutMs,
      // draft 8.7: stop reading past the cap and treat the document as an error.
      maxBytes: opts.maxBytes,
      // draft 5: "MUST NOT automatically follow HTTP redirects".
      maxRedirects: 0,
      resolve: systemResolver,
      headers: { 'User-Agent': 'content-scheduler-oauth/1', Accept: 'application/json' },
    });
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    log.info('oauth client document refused', { url, code: err.code, reason: err.message });
    throw refused(`could not be fetched: ${publicReason(err)}`);
  }
  // draft 4: served with 200 OK; any other status is an error (guardedFetch answers any 2xx).
  if (page.status !== 200) throw refused(`answered HTTP ${page.status}, not 200.`);
  let document: unknown;
  try {
    document = JSON.parse(page.body.toString('utf8'));
  } catch {
    throw refused('is not valid JSON.');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw refused('is not a JSON object.');
  const fields = document as Record<string, unknown>;
  // draft 4: simple string comparison with the URL it was fetched from.
  if (fields.client_id !== url) throw refused(`names another client_id (${JSON.stringify(fields.client_id)?.slice(0, 200)}).`);
  // draft 4.1: no shared secret can exist with a document.
  for (const secret of ['client_secret', 'client_secret_expires_at'])
    if (secret in fields) throw refused(`carries \`${secret}\`, which a metadata document must not (draft 4.1).`);
  let client: NewClient;
  try {
    client = clientFromMetadata(fields);
  } catch (err) {
    if (err instanceof OAuthError) throw refused(`is not acceptable: ${err.message}`);
    throw err;
  }
  // draft 5.2: HTTP cache headers (RFC 9111) within the server's own bounds.
  const ttl = Math.min(opts.cacheMaxS, Math.max(opts.cacheMinS, freshSeconds(page.headers)));
  if (ttl > 0) await redis().set(cacheKey(url), JSON.stringify(client), 'EX', ttl);
  return client;
}
