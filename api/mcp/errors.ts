import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Context, Next } from 'koa';
import { z } from 'zod';
import { ApiError, errors } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { log, withLogContext } from '../../lib/logger';

// The MCP door's error boundary (CONVENTIONS habit 3: one place per door).
//
// - A tool that fails answers a result with isError: true and structured content
//   { code, message, requestId, documentationUrl, details? } (spec 4.9), `code` being the
//   REST error code of spec 7.2, so an agent branches on the same codes as a REST client.
// - A request refused before any tool runs (credential, session, body) answers an HTTP status
//   with a JSON-RPC error whose `data` carries the same fields.

/** spec 4.9: the structured content of a failed tool call; every tool's outputSchema names it too (api/mcp/tool.ts). */
export const toolErrorSchema = z
  .object({
    code: z.string().describe('The REST error code of spec 7.2: branch on it.'),
    message: z.string(),
    requestId: z.string(),
    documentationUrl: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export type ToolErrorContent = z.infer<typeof toolErrorSchema>;

/** Anything that is not an ApiError is logged with its stack and answered as a generic 500. */
export function asApiError(err: unknown, where: Record<string, unknown>): ApiError {
  if (err instanceof ApiError) return err;
  log.error('unhandled error in the MCP door', { ...where, err });
  return errors.internal();
}

export function toolError(err: ApiError, requestId: string): CallToolResult {
  const structuredContent: ToolErrorContent = {
    code: err.code,
    message: err.message,
    requestId,
    documentationUrl: err.docsUrl,
    ...(err.details ? { details: err.details } : {}),
  };
  return {
    isError: true,
    content: [{ type: 'text', text: `${err.code}: ${err.message}` }],
    structuredContent,
    _meta: { requestId },
  };
}

/** JSON-RPC error codes as the SDK uses them on the HTTP layer. */
export const SESSION_NOT_FOUND = -32001;
const SERVER_ERROR = -32000;
const PARSE_ERROR = -32700;

export class SessionNotFound extends ApiError {
  constructor() {
    super('not_found', 'Session not found. Start a new session with an initialize request.');
  }
}

/** A body that is not JSON (JSON-RPC 2.0: parse error). */
export class ParseError extends ApiError {
  constructor(message = 'Parse error: the body is not a JSON-RPC message in JSON.') {
    super('invalid_request', message);
  }
}

export function jsonRpcErrorBody(err: ApiError, requestId: string, id: string | number | null = null) {
  return {
    jsonrpc: '2.0' as const,
    id,
    error: {
      code: err instanceof SessionNotFound ? SESSION_NOT_FOUND : err instanceof ParseError ? PARSE_ERROR : SERVER_ERROR,
      message: err.message,
      data: {
        code: err.code,
        message: err.message,
        requestId,
        documentationUrl: err.docsUrl,
        ...(err.details ? { details: err.details } : {}),
      },
    },
  };
}

/** Request id, and ApiErrors thrown before the SDK takes over the response turned into JSON-RPC errors. */
export async function mcpRequestContext(ctx: Context, next: Next): Promise<void> {
  const requestId = newId('request');
  ctx.state.requestId = requestId;
  ctx.set('X-Request-Id', requestId);
  try {
    await withLogContext({ requestId }, next);
    if (ctx.respond !== false && ctx.body === undefined && ctx.status === 404) throw errors.notFound('route');
  } catch (caught) {
    const err = asApiError(caught, { requestId, method: ctx.method, path: ctx.path });
    if (ctx.respond === false || ctx.res.headersSent) {
      // The SDK owns the response already; all that is left is to end it.
      if (!ctx.res.writableEnded) ctx.res.end();
      return;
    }
    ctx.status = err.status;
    for (const [k, v] of Object.entries(err.headers ?? {})) ctx.set(k, v);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = jsonRpcErrorBody(err, requestId);
  }
}
