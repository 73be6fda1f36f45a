import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'koa';
import { errors } from '../../lib/errors';
import { log } from '../../lib/logger';
import type { ApiDeps } from '../deps';
import { authenticateForSession, authenticateMcpRequest, authInfoOf, handlingRequest, subjectOf, type McpRequestAuth } from './auth';
import { SessionNotFound } from './errors';
import { RedisEventStore } from './eventStore';
import { messagesOf, sendWebResponse, webRequestOf } from './http';
import { createToolServer, runToolCall, toolCallResponseJson } from './server';
import { deleteSession, loadSession, newSessionId, onSessionChange, saveSession, sessionHandle, type SessionRecord } from './sessions';
import { watchTaskStatus } from './tasks';
import type { ToolDefinition } from './tool';
import { findTool, MCP_SCOPES } from './tools/index';

// /mcp: the streamable HTTP transport (spec 4.9, preferred), stateful, with resumable streams.
//
// A session is a transport + Server pair in the memory of the process that serves it, plus a
// record in Redis (sessions.ts). A request carrying a session id this process does not hold
// (the load balancer sent it elsewhere, or this process restarted) rebuilds the pair from the
// record: a transport with the same session id, initialized by replaying the session's
// initialize request. Events are stored in Redis (eventStore.ts), so a stream broken off in one
// process resumes with Last-Event-ID in any other. What does not survive is a tool call in
// flight in a process that dies: its answer never comes, and the host times it out.

interface LiveSession {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  handle: ReturnType<typeof sessionHandle>;
  lastSeen: number;
  /** When the record was last read from Redis (which also slid its lifetime); 0 = read it again. */
  checkedAt: number;
}

const live = new Map<string, LiveSession>();

/** A session nobody has used for this long leaves this process's memory (its record stays in Redis). */
export const IDLE_EVICTION_MS = 30 * 60_000;

/**
 * How long a process trusts its copy of a session record it holds instead of reading Redis on
 * each request (one round trip per call saved). Changes made elsewhere are announced at once
 * (sessions.ts onSessionChange); this bounds the staleness when an announcement is lost.
 */
export const RECORD_RECHECK_MS = 2_000;

let stopListening: (() => void) | undefined;

function openTransport(record: SessionRecord, deps: ApiDeps | undefined): LiveSession {
  const handle = sessionHandle(record);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => record.id,
    eventStore: new RedisEventStore(record.id),
    // DELETE /mcp ends the session everywhere.
    onsessionclosed: (id) => deleteSession(id),
  });
  const server = createToolServer(handle, deps);
  const session: LiveSession = { transport, server, handle, lastSeen: Date.now(), checkedAt: Date.now() };
  transport.onclose = () => {
    if (live.get(record.id) === session) live.delete(record.id);
  };
  transport.onerror = (err) => log.debug('mcp transport', { sessionId: record.id, err: err.message });
  return session;
}

/** Rebuilds a session this process does not hold from its record (see the top of this file). */
async function revive(record: SessionRecord, base: string, deps: ApiDeps | undefined): Promise<LiveSession> {
  const session = openTransport(record, deps);
  await session.server.connect(session.transport);
  const init = new Request(new URL('/mcp', base), {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
  });
  const answer = await session.transport.handleRequest(init, {
    parsedBody: {
      jsonrpc: '2.0',
      id: `revive-${record.id}`,
      method: 'initialize',
      params: {
        protocolVersion: record.protocolVersion ?? '2025-03-26',
        capabilities: record.clientCapabilities ?? {},
        clientInfo: record.clientInfo ?? { name: 'unknown', version: '0' },
      },
    },
  });
  await answer.text();
  if (!answer.ok) throw new Error(`session ${record.id} could not be revived (${answer.status})`);
  const raced = live.get(record.id);
  if (raced) {
    await session.transport.close();
    return raced;
  }
  live.set(record.id, session);
  return session;
}

async function startSession(ctx: Context, base: string): Promise<void> {
  const body = ctx.state.message as unknown;
  const request = await authenticateMcpRequest(ctx, ctx.get('service-workspace-id') || undefined, MCP_SCOPES);
  if (ctx.method !== 'POST' || !messagesOf(body).some((m) => isInitializeRequest(m))) {
    throw errors.invalidRequest('Bad Request: Mcp-Session-Id header is required (start a session with an initialize request).');
  }
  const init = messagesOf(body).find((m) => isInitializeRequest(m)) as {
    params: { protocolVersion: string; capabilities: Record<string, unknown>; clientInfo: { name: string; version: string } };
  };
  const record: SessionRecord = {
    id: newSessionId(),
    transport: 'streamable',
    subject: subjectOf(request.auth),
    workspaceId: request.auth.workspaceId,
    protocolVersion: init.params.protocolVersion,
    clientInfo: { name: String(init.params.clientInfo?.name ?? ''), version: String(init.params.clientInfo?.version ?? '') },
    clientCapabilities: init.params.capabilities ?? {},
    createdAt: new Date().toISOString(),
  };
  const session = openTransport(record, ctx.deps);
  await session.server.connect(session.transport);
  const response = await handlingRequest(request, () =>
    session.transport.handleRequest(webRequestOf(ctx, base), { parsedBody: body, authInfo: authInfoOf(request) }),
  );
  if (response.ok && session.transport.sessionId) {
    // Saved before the answer (and so the session id) reaches the client. If the store is
    // down the client hears 503 (sessions.ts) and this half-open session is dropped.
    await saveSession(record).catch(async (err: unknown) => {
      await session.transport.close().catch(() => {});
      throw err;
    });
    live.set(record.id, session);
  }
  ctx.respond = false;
  await sendWebResponse(ctx.res, response, { 'X-Request-Id': ctx.state.requestId });
}

export function streamableEndpoint(base: () => string) {
  return async function handleMcp(ctx: Context): Promise<void> {
    const sessionId = ctx.get('mcp-session-id');
    if (!sessionId) return startSession(ctx, base());

    const held = live.get(sessionId);
    const now = Date.now();
    const fresh = held && now - held.checkedAt < RECORD_RECHECK_MS ? held.handle.record : null;
    const record = fresh ?? (await loadSession(sessionId));
    if (!record || record.transport !== 'streamable') {
      // Ended elsewhere (DELETE reached another process) or expired: drop the local copy too.
      await live.get(sessionId)?.transport.close();
      // A bad credential hears 401 first, whether or not the session exists.
      await authenticateMcpRequest(ctx, undefined, MCP_SCOPES);
      throw new SessionNotFound();
    }
    const request = await authenticateForSession(ctx, record, MCP_SCOPES);

    const session = live.get(record.id) ?? (await revive(record, base(), ctx.deps));
    if (!fresh) {
      Object.assign(session.handle.record, record);
      session.checkedAt = now;
    }
    session.lastSeen = now;
    const plain = plainReadCall(ctx);
    if (plain) return answerDirectly(ctx, session, plain, request);
    const response = await handlingRequest(request, () =>
      session.transport.handleRequest(webRequestOf(ctx, base()), {
        parsedBody: ctx.state.message,
        authInfo: authInfoOf(request),
      }),
    );
    ctx.respond = false;
    const stopWatch = ctx.method === 'GET' && response.ok ? watchTasksOn(session) : undefined;
    try {
      await sendWebResponse(ctx.res, response, { 'X-Request-Id': ctx.state.requestId });
    } finally {
      stopWatch?.();
    }
  };
}

/**
 * While a session's standalone stream is open here, and its client declared the tasks
 * capability at initialize (a host that handles tasks), its tasks' status changes are told on
 * that stream as notifications/tasks/status (tasks.ts watchTaskStatus). Without either, none is
 * sent and the host polls tasks/get, as the tasks spec has it do anyway.
 */
function watchTasksOn(session: LiveSession): (() => void) | undefined {
  const { record } = session.handle;
  if (!record.clientCapabilities?.tasks) return undefined;
  return watchTaskStatus(
    () => ({ workspaceId: record.workspaceId, subject: record.subject }),
    (task) => session.server.notification({ method: 'notifications/tasks/status', params: task }),
  );
}

/** A tools/call the direct answer below may serve: one request, a read tool, nothing to stream. */
interface PlainCall {
  id: string | number;
  tool: ToolDefinition;
  args: Record<string, unknown>;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
const onlyKeys = (o: Record<string, unknown>, allowed: readonly string[]) => Object.keys(o).every((k) => allowed.includes(k));

/**
 * The SDK's transport answers every request with an SSE stream whose events go through the
 * event store (one Redis write), after parsing the message with its zod schemas and building a
 * web Request and Response around it: about as much CPU again as the operation itself (docs/mcp.md
 * "Benchmark"). A read-only tool call that asks for no progress has nothing to stream and
 * nothing worth resuming (calling it again reads the same thing), so it is answered here as
 * one application/json body — a form every streamable HTTP client accepts (MCP: the server
 * answers a POST with either). Anything else, and anything this check is not sure of (a
 * batch, unknown fields, an unknown tool, odd headers), goes to the SDK, which answers it
 * exactly as before, its errors included.
 */
function plainReadCall(ctx: Context): PlainCall | null {
  const m = ctx.state.message as unknown;
  if (ctx.method !== 'POST' || !isPlainObject(m) || !onlyKeys(m, ['jsonrpc', 'id', 'method', 'params'])) return null;
  if (m.jsonrpc !== '2.0' || m.method !== 'tools/call') return null;
  const id = m.id;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return null;
  const params = m.params;
  if (!isPlainObject(params) || !onlyKeys(params, ['name', 'arguments', '_meta']) || typeof params.name !== 'string') return null;
  // Absent is {}; anything else but an object (null included) is the SDK's -32602.
  const args = params.arguments === undefined ? {} : params.arguments;
  if (!isPlainObject(args)) return null;
  const meta = params._meta;
  if (meta !== undefined && (!isPlainObject(meta) || 'progressToken' in meta)) return null;
  const tool = findTool(params.name);
  if (!tool || tool.annotations.readOnlyHint !== true) return null;
  // The transport's own header checks (406, 415, 400 unsupported version) stay the SDK's.
  const accept = ctx.get('accept');
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if (ctx.get('content-type') !== 'application/json') return null;
  const version = ctx.get('mcp-protocol-version');
  if (version !== '' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
  return { id, tool, args };
}

async function answerDirectly(ctx: Context, session: LiveSession, call: PlainCall, request: McpRequestAuth): Promise<void> {
  const aborted = new AbortController();
  const onClose = () => aborted.abort();
  ctx.res.once('close', onClose);
  try {
    const answer = await runToolCall({
      tool: call.tool,
      args: call.args,
      request,
      session: session.handle,
      deps: ctx.deps,
      signal: aborted.signal,
      progress: null,
    });
    const body = toolCallResponseJson(answer, call.id);
    ctx.respond = false;
    ctx.res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'mcp-session-id': session.handle.id,
      // spec 2.2: an authenticated answer is never stored by a cache.
      'cache-control': 'no-store',
      'X-Request-Id': ctx.state.requestId,
    });
    ctx.res.end(body);
  } finally {
    ctx.res.off('close', onClose);
  }
}

let sweeper: NodeJS.Timeout | undefined;

export function startIdleSweeper(): void {
  stopListening ??= onSessionChange((id) => {
    const held = live.get(id);
    if (held) held.checkedAt = 0;
  });
  sweeper ??= setInterval(() => {
    const cutoff = Date.now() - IDLE_EVICTION_MS;
    for (const [id, s] of live)
      if (s.lastSeen < cutoff) {
        live.delete(id);
        s.transport.close().catch(() => {});
      }
  }, 60_000).unref();
}

export async function closeStreamableSessions(): Promise<void> {
  if (sweeper) clearInterval(sweeper);
  sweeper = undefined;
  stopListening?.();
  stopListening = undefined;
  const sessions = [...live.values()];
  live.clear();
  await Promise.allSettled(sessions.map((s) => s.transport.close()));
}
