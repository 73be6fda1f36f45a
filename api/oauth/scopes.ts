import { expandScopes, isKnownScope } from '../../lib/scopes';
import { InvalidScope } from './errors';

// spec 5.2 applied to OAuth requests. Everything stored or returned is the expanded,
// de-duplicated list (rule 4); it is computed once, at consent, and never again.

/** RFC 6749 3.3: space-delimited, case-sensitive tokens. Unknown tokens are refused by name. */
export function parseScope(value: string | undefined | null): string[] {
  const tokens = (value ?? '').split(' ').filter((s) => s !== '');
  const unknown = tokens.filter((s) => !isKnownScope(s));
  if (unknown.length) throw new InvalidScope(`Unknown scope${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`);
  return tokens;
}

export function scopeString(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/** `offline_access` asks for a refresh token; it reads or writes nothing. */
export function isWriteSide(scope: string): boolean {
  return !scope.endsWith(':read') && scope !== 'offline_access';
}

export type AccessLevel = 'read' | 'full';

/**
 * spec 5.3.2: Read-only is the `*:read` scopes requested (plus `offline_access` when asked for);
 * Full access is everything requested, named-only scopes included only when they were named.
 * The result is never wider than the request.
 */
export function grantedScopes(requested: readonly string[], level: AccessLevel): string[] {
  if (level === 'full') return [...requested];
  return requested.filter((s) => !isWriteSide(s));
}

export function hasWriteSide(requested: readonly string[]): boolean {
  return requested.some(isWriteSide);
}

export function sameScopeSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((s) => sb.has(s));
}

export function isSubset(inner: readonly string[], outer: readonly string[]): boolean {
  const o = new Set(outer);
  return inner.every((s) => o.has(s));
}

export { expandScopes };
