import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import { config } from '../../lib/config';
import { createApiDeps, type ApiDeps } from '../deps';
import { registerOAuthPrincipals } from '../oauth/router';
import { mcpResourceMetadata } from './auth';
import { cors } from './cors';
import { mcpRequestContext } from './errors';
import { readJsonBody } from './http';
import { closeSseSessions, openSseStream, postMessage } from './sse';
import { closeStreamableSessions, startIdleSweeper, streamableEndpoint } from './streamable';
import { MCP_SCOPES } from './tools/index';
import { tracingActive } from '../../lib/telemetry';
import { tracingMiddleware } from '../tracing';

// The {mcp_url} origin (spec 4.9), a Koa app of its own on MCP_PORT in the API process:
//
//   GET  /.well-known/oauth-protected-resource[/mcp|/sse]   RFC 9728 metadata of this resource
//   POST|GET|DELETE /mcp                                      streamable HTTP (sessions, resumable streams)
//   GET  /sse, POST /message?sessionId=                       legacy HTTP+SSE
//
// The SDK's transports answer the protocol; Koa authenticates first and then steps aside
// (ctx.respond = false). Each chain reads left to right.

type Step = (ctx: Context, next: Next) => unknown;

async function serveResourceMetadata(ctx: Context): Promise<void> {
  // spec 5.3: discovery is unauthenticated and cacheable.
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.body = mcpResourceMetadata(MCP_SCOPES);
}

export function createMcpApp(deps: ApiDeps = createApiDeps()): Koa {
  const app = new Koa({ proxy: config.trustProxy });
  // Handed to every tool's operation (api/deps.ts).
  app.context.deps = deps;
  const router = new Router();
  const at = (method: 'get' | 'post' | 'delete', path: string, ...steps: Step[]) => router[method](path, ...(steps as never[]));
  const base = () => config.mcpPublicUrl;

  // RFC 9728 3.1 inserts the resource's path; hosts probe /.well-known/oauth-protected-resource/mcp first.
  for (const path of [
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource/sse',
  ]) {
    at('get', path, serveResourceMetadata);
  }
  const mcp = streamableEndpoint(base);
  at('post', '/mcp', readJsonBody, mcp);
  at('get', '/mcp', mcp);
  at('delete', '/mcp', mcp);
  at('get', '/sse', openSseStream);
  at('post', '/message', readJsonBody, postMessage);

  // OAuth access tokens are principals here as on REST.
  registerOAuthPrincipals();
  startIdleSweeper();
  // The request's trace span (api/tracing.ts); only when tracing is on.
  if (tracingActive()) app.use(tracingMiddleware('mcp'));
  app.use(mcpRequestContext);
  app.use(cors);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** Ends every session held by this process (streams close; records of SSE sessions go). */
export async function closeMcp(): Promise<void> {
  await Promise.allSettled([closeStreamableSessions(), closeSseSessions()]);
}
