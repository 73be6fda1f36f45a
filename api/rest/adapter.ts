import type Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError, errors } from '../../lib/errors';
import { checkScopes } from '../../lib/scopes';
import { authenticate, bearerToken } from '../auth/authenticate';
import type { AuthContext } from '../auth/context';
import { requestHash, unwrapStored, validateIdempotencyKey, withIdempotency } from '../idempotency';
import type { AnyOperation, OperationContext } from '../operation';
import { consume, type RateLimitResult } from '../rateLimit';
import { parseInput } from '../validation';
import { setRouteBodyLimit, type BodyLimit } from './body';
import { resolveVersion, type ApiVersion } from '../versioning';

// The REST door: a route is an operation plus where its input comes from. The chain is the
// same for every route: version → authenticate → rate limit → plan/role → scopes → validate
// → idempotency → handler.

function setRateHeaders(ctx: Context, rl: RateLimitResult) {
  ctx.set('X-RateLimit-Limit', String(rl.limit));
  ctx.set('X-RateLimit-Remaining', String(rl.remaining));
  ctx.set('X-RateLimit-Reset', String(rl.resetAt));
}

async function rateLimit(ctx: Context, bucket: 'read' | 'write' | 'unauthenticated', subject: string) {
  const rl = await consume(bucket, subject);
  setRateHeaders(ctx, rl);
  if (!rl.allowed) {
    throw new ApiError(429, 'rate_limited', `Rate limit of ${rl.limit} requests per minute reached; retry in ${rl.retryAfter} s.`, undefined, { 'Retry-After': String(rl.retryAfter) });
  }
}

export async function authenticateRequest(ctx: Context): Promise<AuthContext> {
  const target = ctx.get('service-workspace-id') || undefined;
  try {
    return await authenticate({ token: bearerToken(ctx.get('authorization') || undefined), targetWorkspaceId: target, resource: 'rest' });
  } catch (err) {
    // Failed credentials are limited per client address so that guessing keys is slow.
    if (err instanceof ApiError && err.status === 401) await rateLimit(ctx, 'unauthenticated', ctx.ip);
    throw err;
  }
}

export function clientRoleRefusal(): ApiError {
  return errors.forbiddenProject('Client accounts cannot use this operation.', { reason: 'client_role' });
}

/** Everything between authentication and the handler, shared with the MCP door. */
export function authorize(op: AnyOperation, auth: AuthContext, version: ApiVersion): void {
  if (auth.role === 'client' && op.clientRole === 'deny') throw clientRoleRefusal();
  const rule = typeof op.scopes === 'function' ? op.scopes(version) : op.scopes;
  const check = checkScopes(auth.scopes, rule);
  if (!check.ok) throw errors.scopeMissing(check.requiredScope);
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

export async function runRest(ctx: Context, op: AnyOperation): Promise<void> {
  ctx.state.handled = true;
  const version = resolveVersion(ctx.get('service-api-version') || undefined);
  ctx.set('Service-Api-Version', version);
  if (op.public) {
    ctx.body = await op.handler({ auth: undefined as unknown as AuthContext, requestId: ctx.state.requestId, apiVersion: version }, {});
    return;
  }
  const auth = await authenticateRequest(ctx);
  await rateLimit(ctx, op.kind, auth.workspaceId);
  authorize(op, auth, version);

  const idempotencyKey = op.kind === 'write' ? ctx.get('idempotency-key') : '';
  if (idempotencyKey) validateIdempotencyKey(idempotencyKey);
  const input = parseInput(op.input, rawInput(ctx, op), op.inputSource);
  const opCtx: OperationContext = { auth, requestId: ctx.state.requestId, apiVersion: version };

  if (op.kind === 'write' && idempotencyKey) {
    const { response, replayed } = await withIdempotency(
      auth.workspaceId, idempotencyKey, `${ctx.method} ${ctx.routerPath ?? ctx.path}`, requestHash(ctx.path, input),
      async () => ({ status: 200, body: await op.handler(opCtx, input) }),
      { encryptBody: op.secretResponse },
    );
    ctx.set('Idempotent-Replayed', String(replayed));
    const unwrapped = unwrapStored(response);
    if (unwrapped.error) throw unwrapped.error;
    ctx.status = unwrapped.status;
    ctx.body = unwrapped.body;
    return;
  }
  const body = await op.handler(opCtx, input);
  if (op.kind === 'write') ctx.set('Idempotent-Replayed', 'false');
  ctx.body = body;
}

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteOptions {
  /** This route's own request-body limit instead of the default (api/rest/body.ts). */
  body?: BodyLimit;
}

export function route(router: Router, method: Method, path: string, op: AnyOperation, opts: RouteOptions = {}): void {
  if (opts.body) setRouteBodyLimit(method, path, opts.body);
  router[method](op.name, path, (ctx) => runRest(ctx as unknown as Context, op));
}
