import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { refusedClass, type AddressPolicy } from '../webhooks/addresses';

// Resolution and address vetting shared by every outbound fetch to a user-given URL (webhook
// delivery, lib/webhooks/send.ts; URL knowledge ingest, lib/net/guardedFetch.ts): resolve the
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
