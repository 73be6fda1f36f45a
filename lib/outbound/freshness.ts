import type { IncomingHttpHeaders } from 'node:http';

// How long a shared cache may reuse an answer (RFC 9111 4.2.1 freshness lifetime, less the
// answer's current age, 4.2.3), for callers that keep what they fetched in their own store
// (OAuth client metadata documents, api/oauth/clientDocuments.ts). Only the explicit signals;
// no heuristic freshness (4.2.2), since a caller that wants a minimum sets its own floor.

function directives(headers: IncomingHttpHeaders): Map<string, string | true> {
  const out = new Map<string, string | true>();
  const raw = headers['cache-control'];
  for (const part of (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).split(',')) {
    const [name, ...value] = part.trim().split('=');
    if (name) out.set(name.toLowerCase(), value.length ? value.join('=').replace(/^"|"$/g, '') : true);
  }
  return out;
}

function seconds(value: string | true | undefined): number | null {
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : null;
}

/** Seconds the answer stays fresh from now; 0 when it must not be reused (no-store, no-cache, private, stale, no signal). */
export function freshSeconds(headers: IncomingHttpHeaders, now = Date.now()): number {
  const cc = directives(headers);
  // 5.2.2.5 no-store, 5.2.2.4 no-cache (reuse needs revalidation, which a stored copy cannot do),
  // 5.2.2.7 private (a shared cache must not store it).
  if (cc.has('no-store') || cc.has('no-cache') || cc.has('private')) return 0;
  const date = headers.date ? Date.parse(headers.date) : NaN;
  let lifetime = seconds(cc.get('s-maxage')) ?? seconds(cc.get('max-age'));
  if (lifetime === null && headers.expires !== undefined) {
    // 5.3: an invalid Expires (e.g. "0") means already expired.
    const expires = Date.parse(headers.expires);
    lifetime = Number.isNaN(expires) ? 0 : Math.floor((expires - (Number.isNaN(date) ? now : date)) / 1000);
  }
  if (lifetime === null) return 0;
  const age = seconds(headers.age) ?? 0;
  const apparent = Number.isNaN(date) ? 0 : Math.max(0, Math.floor((now - date) / 1000));
  return Math.max(0, lifetime - Math.max(age, apparent));
}
