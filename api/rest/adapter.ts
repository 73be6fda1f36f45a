import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from '../../lib/errors';
import type { AuthContext } from '../auth/context';
import type { AnyOperation } from '../operation';
import { authenticateBearer, runOperation, type CallState } from '../pipeline/index';
import type { RateLimitResult } from '../rateLimit';
import { setRouteBodyLimit, type BodyLimit } from './bodyParser';

// The REST door: a route is an operation plus where its input comes from. The steps are the
// pipeline's (api/pipeline): this file only reads the request and writes the response.

// Kept for callers that imported them from here; their home is the pipeline.
export { authorize, clientRoleRefusal } from '../pipeline/index';

function setRateHeaders(ctx: Context, rl: RateLimitResult) {
  ctx.set('X-RateLimit-Limit', String(rl.limit));
  ctx.set('X-RateLimit-Remaining', String(rl.remaining));
  ctx.set('X-RateLimit-Reset', String(rl.resetAt));
}

export async function authenticateRequest(ctx: Context): Promise<AuthContext> {
  const { auth } = await authenticateBearer({
    authorization: ctx.get('authorization') || undefined,
    targetWorkspaceId: ctx.get('service-workspace-id') || undefined,
    resource: 'rest',
    clientAddress: ctx.ip,
  });
  return auth;
}

function rawInput(ctx: Context, op: AnyOperation): Record<string, unknown> {
  const params = (ctx as unknown as { params?: Record<string, string> }).params ?? {};
  if (op.inputSource === 'query') return { ...ctx.query, ...params };
  const body = ctx.state.body;
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    throw errors.unprocessable('The request body must be a JSON object.');
  }
  return { ...(body ?? {}), ...params };
}

/** The header as sent: an empty Idempotency-Key is a key (and refused), not the absence of one. */
function idempotencyKeyOf(ctx: Context): string | undefined {
  const v = ctx.req.headers['idempotency-key'];
  return Array.isArray(v) ? v.join(', ') : v;
}

export async function runRest(ctx: Context, op: AnyOperation): Promise<void> {
  ctx.state.handled = true;
  let state: CallState | undefined;
  try {
    const { status, body } = await runOperation(
      {
        op,
        requestId: ctx.state.requestId,
        versionHeader: ctx.get('service-api-version') || undefined,
        authenticate: () => authenticateRequest(ctx),
        deps: ctx.deps,
        input: () => rawInput(ctx, op),
        idempotencyKey: op.kind === 'write' ? idempotencyKeyOf(ctx) : undefined,
        idempotencyScope: { operation: `${ctx.method} ${ctx.routerPath ?? ctx.path}`, hashSubject: ctx.path },
      },
      (s) => {
        state = s;
      },
    );
    ctx.status = status;
    ctx.body = body;
  } finally {
    if (state?.version) ctx.set('Service-Api-Version', state.version);
    if (state?.rateLimit) setRateHeaders(ctx, state.rateLimit);
    // spec 8: on writes, whether this answer (a stored error too) replays an earlier one.
    if (op.kind === 'write' && state?.replayed !== undefined) ctx.set('Idempotent-Replayed', String(state.replayed));
    // spec 2.2 / RFC 9111 5.2.2.5: an answer about a credential's workspace is never stored by
    // a cache (errors are no-store already, in the error boundary).
    if (state?.auth) ctx.set('Cache-Control', 'no-store');
  }
}

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteOptions {
  /** This route's own request-body limit instead of the default (api/rest/bodyParser.ts). */
  body?: BodyLimit;
}

export interface RouteEntry {
  method: Method;
  path: string;
  op: AnyOperation;
}

// The routes each router was given, in order: the OpenAPI document (api/openapi) is generated
// from this table, so a route added with route() is documented without further work.
const tables = new WeakMap<Router, RouteEntry[]>();

export function route(router: Router, method: Method, path: string, op: AnyOperation, opts: RouteOptions = {}): void {
  if (opts.body) setRouteBodyLimit(method, path, opts.body);
  router[method](op.name, path, (ctx) => runRest(ctx as unknown as Context, op));
  const table = tables.get(router) ?? [];
  table.push({ method, path, op });
  tables.set(router, table);
}

/** The routes registered on `router` through route(). */
export function routeTable(router: Router): readonly RouteEntry[] {
  return tables.get(router) ?? [];
}
