import { randomBytes } from 'node:crypto';
import { ApiError } from '../../lib/errors';
import { log } from '../../lib/logger';
import { newRedisConnection, redis } from '../../lib/redis';
import type { SessionHandle } from './tool';

// Session records shared by every API process (ARCHITECTURE.md: Redis holds only what may be
// lost; losing a record means the host initializes a new session). A record says who opened
// the session (its subject: the API key, or the OAuth client acting for one user) and which
// workspace it is working in; every HTTP request of the session is authenticated against that
// workspace and refused as "Session not found" (404) when its credential has another subject,
// so a session id alone is worth nothing to someone else.

export const SESSION_TTL_S = 24 * 3600;

export type TransportKind = 'streamable' | 'sse';

export interface SessionRecord {
  id: string;
  transport: TransportKind;
  subject: string;
  workspaceId: string;
  /** Streamable HTTP: what the initialize request said, to rebuild the session in another process. */
  protocolVersion?: string;
  clientInfo?: { name: string; version: string };
  clientCapabilities?: Record<string, unknown>;
  createdAt: string;
}

const key = (id: string) => `mcp:session:${id}`;

/** Seconds a caller is told to wait when the session store cannot be reached. */
export const SESSION_STORE_RETRY_AFTER_S = 5;

/**
 * Sessions fail closed (docs/reliability.md "When Redis is down"): without its record a
 * session cannot be authenticated, so a request that needs the store while Redis is unreachable
 * is refused as 503 `temporarily_unavailable` with Retry-After, never answered as a 500 or
 * served unauthenticated. Nothing is lost: records written before the outage are there again
 * when Redis is back, and the shared client reconnects by itself.
 */
async function store<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    log.warn('mcp session store unavailable', { operation, err: err instanceof Error ? err.message : String(err) });
    throw new ApiError(
      'temporarily_unavailable',
      'The session store is unavailable; retry shortly.',
      { retryAfterSeconds: SESSION_STORE_RETRY_AFTER_S },
      { 'Retry-After': String(SESSION_STORE_RETRY_AFTER_S) },
    );
  }
}

/** 192 random bits; visible ASCII only (MCP streamable HTTP, session management). */
export function newSessionId(): string {
  return randomBytes(24).toString('base64url');
}

export async function saveSession(record: SessionRecord): Promise<void> {
  await store('save', () => redis().set(key(record.id), JSON.stringify(record), 'EX', SESSION_TTL_S));
}

/** Reads the record and slides its lifetime in one round trip. */
export async function loadSession(id: string): Promise<SessionRecord | null> {
  if (!id || id.length > 200) return null;
  const raw = await store('load', () => redis().getex(key(id), 'EX', SESSION_TTL_S));
  return raw ? (JSON.parse(raw) as SessionRecord) : null;
}

/** Slides the lifetime of a session that is in use without requests (an open SSE stream). */
export async function touchSession(id: string): Promise<void> {
  await store('touch', () => redis().expire(key(id), SESSION_TTL_S));
}

export async function deleteSession(id: string): Promise<void> {
  await store('delete', () => redis().del(key(id)));
  await announceChange(id);
}

/**
 * A process that holds a session in memory trusts its copy of the record for a short while
 * instead of reading Redis on every request (streamable.ts). Whatever changes a record
 * elsewhere (its end, a workspace switch) is announced on this channel, so the holders read it
 * again at their next request; a lost announcement costs at most RECORD_RECHECK_MS of staleness.
 */
export const SESSION_CHANGED_CHANNEL = 'mcp:session:changed';

async function announceChange(id: string): Promise<void> {
  await redis()
    .publish(SESSION_CHANGED_CHANNEL, id)
    .catch((err: Error) => log.debug('mcp session change not announced', { sessionId: id, err: err.message }));
}

let subscriber: ReturnType<typeof newRedisConnection> | null = null;
const changeListeners = new Set<(id: string) => void>();

/** Calls `listener` with the id of every session record changed or ended by any process. */
export function onSessionChange(listener: (id: string) => void): () => void {
  changeListeners.add(listener);
  if (!subscriber) {
    const sub = (subscriber = newRedisConnection());
    sub.subscribe(SESSION_CHANGED_CHANNEL).catch((err: Error) => log.warn('mcp session channel subscribe failed', { err: err.message }));
    sub.on('message', (_channel: string, id: string) => {
      for (const l of changeListeners) l(id);
    });
  }
  return () => {
    changeListeners.delete(listener);
    if (changeListeners.size === 0 && subscriber) {
      subscriber.disconnect();
      subscriber = null;
    }
  };
}

/**
 * The handle the tools see. The record in Redis is the truth (another process may serve the
 * session's next request); `record` is this process's copy, kept in step by every request.
 */
export function sessionHandle(record: SessionRecord): SessionHandle & { record: SessionRecord } {
  return {
    record,
    get id() {
      return record.id;
    },
    get workspaceId() {
      return record.workspaceId;
    },
    async switchWorkspace(workspaceId: string) {
      record.workspaceId = workspaceId;
      const current = await loadSession(record.id);
      await saveSession({ ...(current ?? record), workspaceId });
      await announceChange(record.id);
    },
  };
}
