// The rules every protocol call shares (docs/network-protocol.md, "Common rules" and "Token
// errors"): what a route is, the version headers, the bearer token, and who may act as whom.

import type { IncomingMessage } from 'node:http';
import type { SimOperation } from '../control';
import type { MetricsGrowth, ViralCorpus } from '../planning';
import { restError, type ErrorStyle, type SimResponse } from '../responses';
import type { Person, SimState } from '../state';

/** The header carrying the client's post reference on `POST /rest/posts`. */
export const REFERENCE_HEADER = 'X-Idempotency-Key';

const VERSION_RE = /^\d{6}(\.\d{2})?$/;

/** What a route handler reads and changes. */
export interface SimContext {
  /** The current state: reset() replaces it, so read it per call. */
  readonly state: SimState;
  /** Client credentials the token endpoints accept. */
  readonly clientId: string;
  readonly clientSecret: string;
  /** planning: organic metrics growth and the viral-post corpus (sim/network/planning.ts); reset() keeps them. */
  readonly growth: MetricsGrowth;
  readonly viral: ViralCorpus;
}

export type Handler = (ctx: SimContext, req: IncomingMessage, url: URL, body: Buffer, pathParam: string | null) => SimResponse;

/** One protocol endpoint: the operation it counts as (faults, latency, counts), its error style and handler. */
export interface Route {
  operation: SimOperation;
  style: ErrorStyle;
  handle: Handler;
}

/** Routes keyed `METHOD /path`; `/rest/posts/{urn}`, `/rest/socialMetadata/{urn}` and `/dms-uploads/{token}` carry a parameter. */
export type Routes = Record<string, Route>;

/** Version header check shared by every /rest call: the network refuses unversioned calls. */
function checkVersion(req: IncomingMessage): SimResponse | null {
  const v = req.headers['linkedin-version'];
  if (typeof v !== 'string' || v === '')
    return restError(400, 'VERSION_MISSING', 'A version must be present. Please specify a version by adding the LinkedIn-Version header.');
  if (!VERSION_RE.test(v)) return restError(426, 'NONEXISTENT_VERSION', `Requested version ${v} is not active`);
  const restli = req.headers['x-restli-protocol-version'];
  if (restli !== undefined && restli !== '2.0.0')
    return restError(400, 'INVALID_RESTLI_PROTOCOL_VERSION', 'X-Restli-Protocol-Version must be 2.0.0');
  return null;
}

/** The call's bearer token, or null when its Authorization header carries none. */
export function bearerToken(req: IncomingMessage): string | null {
  return /^Bearer\s+(\S+)$/i.exec(req.headers.authorization?.trim() ?? '')?.[1] ?? null;
}

export function authenticate(ctx: SimContext, req: IncomingMessage): { person: Person } | { error: SimResponse } {
  const header = req.headers.authorization;
  const bearer = { 'www-authenticate': 'Bearer error="invalid_token"' };
  if (!header || header.trim() === '') return { error: restError(401, 'INVALID_ACCESS_TOKEN', 'Empty oauth2 access token', bearer) };
  const token = bearerToken(req);
  if (!token) return { error: restError(401, 'INVALID_ACCESS_TOKEN', 'Unknown authentication scheme', bearer) };
  const rec = ctx.state.accessTokens.get(token);
  if (!rec) return { error: restError(401, 'INVALID_ACCESS_TOKEN', 'Invalid access token', bearer) };
  if (rec.grant.revoked)
    return { error: restError(401, 'REVOKED_ACCESS_TOKEN', 'The token used in the request has been revoked by the user', bearer) };
  if (Date.now() >= rec.expiresAt)
    return { error: restError(401, 'EXPIRED_ACCESS_TOKEN', 'The token used in the request has expired', bearer) };
  const person = ctx.state.persons.get(rec.grant.personId)!;
  return { person };
}

/** A versioned REST route's handler: the caller's version headers, then its token, are checked first, in the network's order. */
export function versioned(
  handle: (ctx: SimContext, caller: Person, req: IncomingMessage, url: URL, body: Buffer, pathParam: string | null) => SimResponse,
): Handler {
  return (ctx, req, url, body, pathParam) => {
    const versionError = checkVersion(req);
    if (versionError) return versionError;
    const auth = authenticate(ctx, req);
    return 'error' in auth ? auth.error : handle(ctx, auth.person, req, url, body, pathParam);
  };
}
