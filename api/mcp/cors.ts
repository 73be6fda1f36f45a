import type { Context, Next } from 'koa';

// CORS of the MCP door (docs/mcp.md): bearer credentials, no cookies, so any origin may call,
// as with the REST API. The headers every answer carries are stated once here: the app's
// middleware sets them, and so does the listener's answer to a request Node's HTTP parser
// refused before the app ran (api/listen.ts), so a browser agent can read that 400 too.

/** On every answer of the MCP door, whoever writes it. */
export const MCP_CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Mcp-Session-Id, WWW-Authenticate, X-Request-Id',
});

/** Added to the answer of a preflight (OPTIONS) request. */
const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Allow-Headers':
    'Authorization, Content-Type, Accept, Last-Event-ID, Mcp-Session-Id, Mcp-Protocol-Version, Service-Workspace-Id, Service-Api-Version',
  'Access-Control-Max-Age': '600',
});

export async function cors(ctx: Context, next: Next): Promise<void> {
  ctx.set(MCP_CORS_HEADERS);
  if (ctx.method === 'OPTIONS') {
    ctx.set(PREFLIGHT_HEADERS);
    ctx.status = 204;
    return;
  }
  await next();
}
