// spec 5.2: the scope vocabulary and its implication rules, in one place.

export const READ_SCOPES = [
  'workspace:read',
  'projects:read',
  'notes:read',
  'posts:read',
  'sources:read',
  'knowledge:read',
  'jobs:read',
  'analytics:read',
  'media:read',
] as const;
export const WRITE_SCOPES = [
  'notes:write',
  'posts:write',
  'posts:generate',
  'sources:write',
  'knowledge:write',
  'ideas:write',
  'jobs:cancel',
] as const;
/** spec 5.2 rule 3: never implied by an alias or another scope; requested by name only. */
export const NAMED_ONLY_SCOPES = ['posts:publish', 'settings:write'] as const;
export const DESTROY_SCOPES = [
  'posts:destroy',
  'notes:destroy',
  'sources:destroy',
  'knowledge:destroy',
  'ideas:destroy',
  'media:destroy',
] as const;
/** spec 5.1: OAuth tokens only. */
export const OAUTH_ONLY_SCOPES = ['webhooks:manage', 'offline_access'] as const;

export const ALL_SCOPES: readonly string[] = [
  ...READ_SCOPES,
  ...WRITE_SCOPES,
  ...NAMED_ONLY_SCOPES,
  ...DESTROY_SCOPES,
  ...OAUTH_ONLY_SCOPES,
];
export const ALIASES = { read: [...READ_SCOPES], write: [...READ_SCOPES, ...WRITE_SCOPES] } as const;

export function isNamedOnly(scope: string): boolean {
  return (NAMED_ONLY_SCOPES as readonly string[]).includes(scope) || scope.endsWith(':destroy');
}

export function isKnownScope(scope: string): boolean {
  return scope === 'read' || scope === 'write' || ALL_SCOPES.includes(scope);
}

/** spec 5.2 rule 4: aliases expand; the result is de-duplicated and ordered as the vocabulary. */
export function expandScopes(scopes: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const s of scopes) {
    if (s === 'read' || s === 'write') ALIASES[s].forEach((x) => out.add(x));
    else out.add(s);
  }
  return ALL_SCOPES.filter((s) => out.has(s)).concat([...out].filter((s) => !ALL_SCOPES.includes(s)).sort());
}

/** spec 5.2 rule 2: write implies read of the same resource; posts:generate implies posts:read. */
export function holds(granted: ReadonlySet<string>, required: string): boolean {
  if (granted.has(required)) return true;
  if (isNamedOnly(required)) return false;
  const [resource, action] = required.split(':');
  if (action === 'read') {
    if (granted.has(`${resource}:write`)) return true;
    if (required === 'posts:read' && granted.has('posts:generate')) return true;
  }
  return false;
}

export type ScopeRule = { allOf: readonly string[] } | { anyOf: readonly string[] } | 'any';

export type ScopeCheck = { ok: true } | { ok: false; requiredScope?: string };

/** spec 7.2 scope_missing: details.required_scope only when exactly one named scope is missing. */
export function checkScopes(granted: ReadonlySet<string>, rule: ScopeRule): ScopeCheck {
  if (rule === 'any') return { ok: true };
  if ('anyOf' in rule) return rule.anyOf.some((s) => holds(granted, s)) ? { ok: true } : { ok: false };
  const missing = rule.allOf.filter((s) => !holds(granted, s));
  if (missing.length === 0) return { ok: true };
  return missing.length === 1 ? { ok: false, requiredScope: missing[0] } : { ok: false };
}
