import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'koa';
import type { Redis } from 'ioredis';
import { decrypt, encrypt } from '../../lib/crypto';
import { ApiError, errors } from '../../lib/errors';
import { log } from '../../lib/logger';
import { newRedisConnection, redis } from '../../lib/redis';
import { authenticate } from '../auth/authenticate';
import { authenticateForSession, authenticateMcpRequest, authInfoOf, handlingRequest, subjectOf, type McpRequestAuth } from './auth';
import { asApiError, jsonRpcErrorBody, SessionNotFound } from './errors';
import { messagesOf } from './http';
import { createToolServer } from './server';
import { deleteSession, loadSession, saveSession, sessionHandle, touchSession, type SessionRecord } from './sessions';
import { MCP_SCOPES } from './tools/index';

// /sse + /message: the legacy HTTP+SSE transport (spec 4.9). GET /sse holds an event stream
// open in one process; the client POSTs its messages to /message?sessionId=…, and with several
// API processes behind a load balancer that POST may land anywhere. The process that receives
// it authenticates it (401, 404 for another credential's session) and, when it
// does not hold the stream, publishes it on the Redis channel of the session; the process that
// holds the stream subscribes to that channel and hands the message to its transport. A
// PUBLISH nobody receives means the stream is gone: 404.

/** `sealedToken`: the bearer credential, encrypted (lib/crypto) so that it never crosses Redis in clear. */
interface Forwarded {
  message: unknown;
  sealedToken: string;
  apiVersion: McpRequestAuth['apiVersion'];
  requestId: string;
}

interface LiveSseSession {
  transport: SSEServerTransport;
  server: Server;
  handle: ReturnType<typeof sessionHandle>;
}

const live = new Map<string, LiveSseSession>();
const channel = (id: string) => `mcp:sse:${id}`;

/** SSE comments keep proxies from closing an idle stream and slide the session's lifetime. */
export const KEEPALIVE_MS = 15_000;

let subscriber: Redis | undefined;

function subscriptions(): Redis {
  if (subscriber) return subscriber;
  const sub = newRedisConnection();
  sub.on('message', (ch: string, payload: string) => {
    const id = ch.slice('mcp:sse:'.length);
    const session = live.get(id);
    if (session)
      deliverForwarded(session, JSON.parse(payload) as Forwarded).catch((err) =>
        log.error('mcp sse forward failed', { sessionId: id, err }),
      );
  });
  subscriber = sub;
  return sub;
}

/**
 * A message another process accepted for a stream held here. It was authenticated there; it
 * is authenticated again here against the session's workspace as this process knows it (the
 * tools run here, and so does switch_workspace), which also keeps a token revoked in between
 * from acting.
 */
async function deliverForwarded(session: LiveSseSession, f: Forwarded): Promise<void> {
  let request: McpRequestAuth;
  try {
    const token = decrypt(f.sealedToken);
    const auth = await authenticate({ token, targetWorkspaceId: session.handle.workspaceId, resource: 'mcp' });
    request = { auth, token, apiVersion: f.apiVersion, requestId: f.requestId };
  } catch (caught) {
    const err = asApiError(caught, { requestId: f.requestId });
    for (const m of messagesOf(f.message)) {
      if (m.id !== undefined && m.method !== undefined)
        await session.transport.send(jsonRpcErrorBody(err, f.requestId, m.id as string | number) as unknown as JSONRPCMessage);
    }
    return;
  }
  await handlingRequest(request, () => session.transport.handleMessage(f.message, { authInfo: authInfoOf(request) }));
}

export async function openSseStream(ctx: Context): Promise<void> {
  const request = await authenticateMcpRequest(ctx, ctx.get('service-workspace-id') || undefined, MCP_SCOPES);
  // The endpoint event names /message relative to this origin (the SDK client insists on the same origin).
  const transport = new SSEServerTransport('/message', ctx.res);
  const record: SessionRecord = {
    id: transport.sessionId,
    transport: 'sse',
    subject: subjectOf(request.auth),
    workspaceId: request.auth.workspaceId,
    createdAt: new Date().toISOString(),
  };
  // Before the stream starts, so a session store that is down is answered 503 (sessions.ts).
  await saveSession(record);
  ctx.respond = false;
  ctx.res.setHeader('X-Request-Id', ctx.state.requestId);
  const handle = sessionHandle(record);
  const server = createToolServer(handle, ctx.deps);
  const session: LiveSseSession = { transport, server, handle };
  live.set(record.id, session);
  await subscriptions().subscribe(channel(record.id));

  const keepalive = setInterval(() => {
    if (!ctx.res.writableEnded) ctx.res.write(': keepalive\n\n');
    touchSession(record.id).catch(() => {});
  }, KEEPALIVE_MS);
  const closed = new Promise<void>((resolve) => ctx.res.once('close', resolve));
  await server.connect(transport);
  await closed;

  // The stream is the session: when it closes, the session ends everywhere.
  clearInterval(keepalive);
  live.delete(record.id);
  await Promise.allSettled([subscriptions().unsubscribe(channel(record.id)), deleteSession(record.id), server.close()]);
}

export async function postMessage(ctx: Context): Promise<void> {
  const id = typeof ctx.query.sessionId === 'string' ? ctx.query.sessionId : '';
  if (!id) throw errors.invalidRequest('The sessionId query parameter is required; use the endpoint announced on the /sse stream.');
  const record = await loadSession(id);
  if (!record || record.transport !== 'sse') {
    // A bad credential hears 401 first, whether or not the session exists.
    await authenticateMcpRequest(ctx, undefined, MCP_SCOPES);
    throw new SessionNotFound();
  }
  const request = await authenticateForSession(ctx, record, MCP_SCOPES);
  const message = ctx.state.message as unknown;
  if (message === undefined || typeof message !== 'object' || Array.isArray(message))
    throw errors.invalidRequest('The body must be one JSON-RPC message.');

  const session = live.get(id);
  if (session) {
    try {
      await handlingRequest(request, () => session.transport.handleMessage(message, { authInfo: authInfoOf(request) }));
    } catch {
      throw new ApiError('invalid_request', 'Invalid message: not a JSON-RPC message.');
    }
  } else {
    const forwarded: Forwarded = {
      message,
      sealedToken: encrypt(request.token),
      apiVersion: request.apiVersion,
      requestId: request.requestId,
    };
    const receivers = await redis().publish(channel(id), JSON.stringify(forwarded));
    if (receivers === 0) {
      // The process holding the stream is gone without cleaning up.
      await deleteSession(id);
      throw new SessionNotFound();
    }
  }
  ctx.status = 202;
  ctx.body = 'Accepted';
}

export async function closeSseSessions(): Promise<void> {
  const sessions = [...live.values()];
  live.clear();
  await Promise.allSettled(sessions.map((s) => s.transport.close()));
  subscriber?.disconnect();
  subscriber = undefined;
}
