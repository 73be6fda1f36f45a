import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Middleware, Next } from 'koa';
import { tracer } from '../lib/telemetry';

// The request's server span (lib/telemetry.ts, docs/operations.md "Traces"): the parent of every
// span the request makes (Postgres, Redis, the Temporal client's start or signal, outbound
// calls). It continues a caller's W3C `traceparent`. Mounted only when tracing is on in this
// process, so with tracing off a request runs no tracing code at all.

const getter = {
  keys: (headers: Context['headers']) => Object.keys(headers),
  get: (headers: Context['headers'], key: string) => headers[key],
};

export function tracingMiddleware(door: 'rest' | 'mcp'): Middleware {
  return async function traceRequest(ctx: Context, next: Next): Promise<void> {
    const parent = propagation.extract(context.active(), ctx.headers, getter);
    const span = tracer().startSpan(
      `${ctx.method} ${ctx.path}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path, 'content_scheduler.door': door },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      // The route pattern, not the path, names the span (bounded names: `PATCH /v1/posts/:id`).
      const c = ctx as Context & { _matchedRouteName?: string; _matchedRoute?: string };
      if (typeof c._matchedRoute === 'string') {
        span.updateName(`${ctx.method} ${c._matchedRoute}`);
        span.setAttribute('http.route', c._matchedRoute);
      }
      if (c._matchedRouteName) span.setAttribute('content_scheduler.operation', c._matchedRouteName);
      if (typeof ctx.state.requestId === 'string') span.setAttribute('content_scheduler.request_id', ctx.state.requestId);
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
