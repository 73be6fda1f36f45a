import type { Context, Next } from 'koa';
import type { z } from 'zod';
import type { ErrorCode } from '../../lib/errors';
import type { ClientRow } from './clients';
import type { Params } from './params';

// Small pieces shared by the endpoint chains.

/**
 * A JSON endpoint of the authorization server: its chain (router.ts mounts `steps`), and what
 * it reads, answers and refuses with, from which the OpenAPI document describes it
 * (api/openapi/oauth.ts). A step that starts throwing another code adds it to `errors`.
 */
export interface OAuthEndpoint {
  steps: Array<(ctx: Context, next: Next) => unknown>;
  /** The body parameters (form-encoded, or a JSON object of strings); none for a GET. */
  request?: z.ZodType;
  /** The 200 (201 for a registration) answer; none for an empty body. */
  response?: z.ZodType;
  /** The codes its steps answer (spec 7.3); internal_error and temporarily_unavailable hold everywhere. */
  errors: readonly ErrorCode[];
}

/** What the steps of one OAuth request hand to each other. */
export interface OAuthState {
  params: Params;
  /** The `resource` indicators of the request (RFC 8707 2), as sent; checked by the endpoint. */
  resources: string[];
  client?: ClientRow;
  /** Set once client_id and redirect_uri are validated: from then on errors may redirect (RFC 6749 4.1.2.1). */
  redirect?: { uri: string; state: string | null };
}

export function oauthState(ctx: Context): OAuthState {
  return (ctx.state.oauth ??= { params: {}, resources: [] }) as OAuthState;
}

/** RFC 6749 5.1: token responses (and anything else carrying a secret) are never cached. */
export async function noStore(ctx: Context, next: Next): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  await next();
}

/**
 * Browser-based public clients call discovery, registration and the token endpoints from
 * another origin. Nothing here uses cookies or ambient authority, so any origin may read the
 * answers (RFC 8414 3 / RFC 9728 3 expect metadata to be fetchable cross-origin).
 */
export async function allowAnyOrigin(ctx: Context, next: Next): Promise<void> {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Expose-Headers', 'X-Request-Id, WWW-Authenticate, Retry-After');
  await next();
}

export async function corsPreflight(ctx: Context): Promise<void> {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version');
  ctx.set('Access-Control-Max-Age', '86400');
  ctx.status = 204;
  ctx.state.handled = true;
}
