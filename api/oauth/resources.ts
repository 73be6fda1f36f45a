import { config } from '../../lib/config';
import type { ResourceBinding } from '../../lib/oauth/tokens';
import { InvalidTarget } from './errors';

// Resource indicators (RFC 8707). This authorization server protects two resource servers:
// the REST API (config.publicUrl) and the MCP transport (config.mcpPublicUrl). A client may
// name the one it wants a token for with `resource`, at /oauth/authorize and at /oauth/token;
// the token is then audience-restricted to it (RFC 8707 2: "the authorization server SHOULD
// audience-restrict issued access tokens to the resource(s) indicated").
//
// A binding is stored on codes, token families and access tokens as the canonical identifier
// of one resource, or null for "both". Null is also what a request without `resource` gets:
// clients written before resource indicators were honoured keep tokens that work on REST and
// MCP alike, and rows issued before the column existed mean the same.

/** One resource's canonical identifier, or null: valid for both resources. */
export type { ResourceBinding };

export type ResourceServer = 'rest' | 'mcp';

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, '');

/** The REST resource's identifier, as its RFC 9728 metadata names it. */
export function restResource(): string {
  return withoutTrailingSlash(config.publicUrl);
}

/** The MCP resource's identifier, as its RFC 9728 metadata names it (api/mcp/auth.ts). */
export function mcpResource(): string {
  return withoutTrailingSlash(config.mcpPublicUrl);
}

export function resourceOf(server: ResourceServer): string {
  return server === 'mcp' ? mcpResource() : restResource();
}

/**
 * The MCP listener's endpoints. A host may name the server URL it connects to rather than the
 * identifier of the metadata: the MCP SDK does when its provider implements
 * validateResourceURL (whose default is the server URL), and without protected-resource
 * metadata. Both name the MCP resource.
 */
const MCP_ENDPOINT_PATHS = ['/mcp', '/sse'];

/**
 * Compared as URLs (scheme and host case, default ports) with the trailing slash of the path
 * ignored: `https://mcp.example.com` and `https://mcp.example.com/` are the same resource, and
 * the SDK's `URL.href` adds that slash to a pathless identifier.
 */
function comparable(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${url.search}`;
}

function shown(value: string): string {
  return value.length > 200 ? `${value.slice(0, 200)}…` : value;
}

/** The canonical identifier `value` names; InvalidTarget when it is malformed or not ours. */
export function canonicalResource(value: string): string {
  // RFC 8707 2: an absolute URI (RFC 3986 4.3), which has no fragment.
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    /* below */
  }
  if (!url || value.includes('#'))
    throw new InvalidTarget(`The resource "${shown(value)}" is not an absolute URI without a fragment (RFC 8707).`);
  if (!url.username && !url.password) {
    const key = comparable(url);
    const rest = restResource();
    const mcp = mcpResource();
    if (key === comparable(new URL(rest))) return rest;
    if (key === comparable(new URL(mcp))) return mcp;
    if (MCP_ENDPOINT_PATHS.some((path) => key === comparable(new URL(mcp + path)))) return mcp;
  }
  throw new InvalidTarget(
    `The resource "${shown(value)}" is not protected by this authorization server; use ${restResource()} (REST API) or ${mcpResource()} (MCP).`,
  );
}

/**
 * The binding asked for by the `resource` values of a request (RFC 8707 2 allows several).
 * None, or both resources named, is null.
 */
export function requestedBinding(values: readonly string[]): ResourceBinding {
  if (values.length === 0) return null;
  const named = new Set(values.map(canonicalResource));
  // Only two resources exist, so two distinct names are both of them.
  return named.size === 1 ? [...named][0]! : null;
}

/**
 * RFC 8707 2.2: a token request may name resources only within those of the grant. The
 * binding of the access token to issue: what the request names, or else the grant's.
 */
export function narrowBinding(granted: ResourceBinding, values: readonly string[]): ResourceBinding {
  if (values.length === 0) return granted;
  const asked = requestedBinding(values);
  if (granted === null || asked === granted) return asked;
  throw new InvalidTarget(`This grant is for ${granted} only; a token for another resource needs a new authorization.`);
}

/** Whether a token bound to `binding` may be used at `server` (RFC 8707 2: audience restriction). */
export function bindingAllows(binding: ResourceBinding | undefined, server: ResourceServer): boolean {
  return binding === null || binding === undefined || binding === resourceOf(server);
}
