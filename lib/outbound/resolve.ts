import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { refusedClass, type AddressPolicy } from '../webhooks/addresses';

// Resolution and address vetting shared by every outbound fetch to a user-given URL (webhook
// delivery, lib/webhooks/send.ts; URL knowledge ingest, lib/outbound/guardedFetch.ts): resolve the
// host now, keep only an answer the address policy allows, and pin the socket to that address.

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** The first candidate the policy allows, or the sentence that refuses them all. */
export function vetAddresses(
  host: string,
  candidates: ResolvedAddress[],
  policy: AddressPolicy,
): { ok: true; address: ResolvedAddress } | { ok: false; reason: string } {
  if (candidates.length === 0) return { ok: false, reason: `dns_failed: ${host} has no addresses` };
  const vetted = candidates.find((c) => refusedClass(c.address, policy) === null);
  if (vetted) return { ok: true, address: vetted };
  const first = candidates[0]!;
  return { ok: false, reason: `address_refused: ${host} resolves to ${first.address}, a ${refusedClass(first.address, policy)} address` };
}

/** The literal address of an IP host, or null when the host is a name to resolve. */
export function literalAddress(host: string): ResolvedAddress | null {
  const kind = isIP(host);
  return kind ? { address: host, family: kind === 6 ? 6 : 4 } : null;
}

/** A socket lookup that answers only the vetted address, so DNS cannot change between check and connect. */
export function pinnedLookup(vetted: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [vetted]);
    else callback(null, vetted.address, vetted.family);
  };
}

/**
 * Whether a URL is on one of the exactly allowed origins (KNOWLEDGE_FETCH_ALLOW_ORIGINS,
 * docs/knowledge.md "URL ingest"). `raw` is the URL as given (the request, or a redirect's
 * Location). The URL standard rewrites `127.1`, `0x7f.1`, `2130706433` and `http:\\h` to the
 * canonical form, so an absolute or scheme-relative URL must also be *written* as the allowed
 * origin to match: an allowance for one spelling is not one for every spelling that reaches the
 * same socket. A path-relative Location stays on the origin that answered it.
 */
export function onAllowedOrigin(raw: string, url: URL, allowed: readonly string[]): boolean {
  if (allowed.length === 0 || !allowed.includes(url.origin)) return false;
  // What the URL parser ignores: tabs and newlines anywhere, C0 controls and spaces around.
  const written = raw.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
  const spelled = (s: string) =>
    s.slice(0, url.origin.length).toLowerCase() === url.origin && '/?#\\'.includes(s.charAt(url.origin.length));
  if (/^[a-z][a-z0-9+.-]*:/i.test(written)) return spelled(written);
  if (/^[\\/]{2}/.test(written)) return spelled(`${url.protocol}${written}`);
  return true;
}
