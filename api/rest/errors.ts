import type { Context, Next } from 'koa';
import { config } from '../../lib/config';
import { ApiError, errors } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { log, withLogContext } from '../../lib/logger';
import { httpDuration, httpRequests } from '../../lib/metrics';

// spec 7.1: the one place a thrown error becomes the REST envelope. Unexpected errors are
// logged with their stack under the request id and answered with a generic 500.

export function errorBody(err: ApiError, requestId: string) {
  return {
    error: {
      code: err.code,
      message: err.message,
      request_id: requestId,
      docs_url: err.docsUrl,
      ...(err.details ? { details: err.details } : {}),
    },
  };
}

export function sendError(ctx: Context, err: ApiError): void {
  ctx.status = err.status;
  for (const [k, v] of Object.entries(err.headers ?? {})) ctx.set(k, v);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = errorBody(err, ctx.state.requestId);
}

export async function requestContext(ctx: Context, next: Next): Promise<void> {
  const requestId = newId('request');
  ctx.state.requestId = requestId;
  ctx.set('X-Request-Id', requestId);
  const started = performance.now();
  try {
    await withLogContext({ requestId }, next);
    if (ctx.body === undefined && !ctx.state.handled) {
      if (ctx.status === 404) throw errors.notFound('route');
      if (ctx.status === 405 || ctx.status === 501) {
        throw new ApiError('method_not_allowed', `${ctx.method} is not accepted on this path; see the Allow header.`, undefined, {
          Allow: ctx.response.get('Allow'),
        });
      }
    }
  } catch (err) {
    if (err instanceof ApiError) {
      sendError(ctx, err);
    } else if (isClientAbort(err)) {
      ctx.status = 499;
    } else {
      log.error('unhandled error', { requestId, method: ctx.method, path: ctx.path, err });
      sendError(ctx, errors.internal());
    }
  } finally {
    // issue 17 metrics: the operation is the route's name (the operation name for route()),
    // else its path pattern, else `unmatched`, so label values stay a bounded set.
    const c = ctx as Context & { _matchedRouteName?: string; _matchedRoute?: string };
    const labels = {
      operation: c._matchedRouteName ?? (typeof c._matchedRoute === 'string' ? c._matchedRoute : 'unmatched'),
      method: ctx.method,
      status: String(ctx.status),
    };
    httpRequests.inc(labels);
    httpDuration.observe(labels, (performance.now() - started) / 1000);
    if (ctx.status >= 500 || config.logRequests) {
      log.info('request', {
        requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(performance.now() - started),
      });
    }
  }
}

function isClientAbort(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === 'ECONNRESET';
}
