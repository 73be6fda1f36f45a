import { AUTH_INVALIDATION_CHANNEL, onLocalInvalidation } from '../../lib/auth/invalidation';
import { config } from '../../lib/config';
import { keyedHash } from '../../lib/crypto';
import { db } from '../../lib/db';
import { errors } from '../../lib/errors';
import { log } from '../../lib/logger';
import { newRedisConnection } from '../../lib/redis';
import type { AuthContext } from './context';

// Key administration (creation, plan check, invalidation) lives in lib/ for the operator tools.
export { API_KEY_PREFIXES, createApiKey, planAllowsApi } from '../../lib/auth/apiKeys';
export { publishAuthInvalidation } from '../../lib/auth/invalidation';

// spec 5.1: workspace API keys, stored as a keyed hash. Records are cached per process for at
// most AUTH_CACHE_MS (below the 5 s revocation bound) and dropped at once when an operator
// edits or revokes a key, through a Redis channel every API process listens on.

interface KeyRecord {
  id: string;
  workspace_id: string;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  plan: string;
  billing_plan: string | null;
}

const cache = new Map<string, { record: KeyRecord | null; at: number }>();

/** Drops every cached record and the reads in flight (their answers may predate the change). */
function invalidate(): void {
  generation++;
  cache.clear();
  loading.clear();
}
onLocalInvalidation('apiKeys', invalidate);
let subscriber: ReturnType<typeof newRedisConnection> | null = null;

function subscribeOnce() {
  if (subscriber) return;
  const sub = (subscriber = newRedisConnection());
  sub.subscribe(AUTH_INVALIDATION_CHANNEL).catch((err) => log.warn('auth invalidation subscribe failed', { err }));
  // Any message clears the whole cache: edits are rare, and a full clear cannot miss an entry.
  sub.on('message', invalidate);
}

export function closeAuthSubscriber(): void {
  subscriber?.disconnect();
  subscriber = null;
}

async function loadKey(hash: string): Promise<KeyRecord | null> {
  const row = await db()('api_keys as k')
    .join('workspaces as w', 'w.id', 'k.workspace_id')
    .leftJoin('workspaces as b', 'b.id', 'w.billing_workspace_id')
    .where('k.key_hash', hash)
    .first('k.id', 'k.workspace_id', 'k.scopes', 'k.expires_at', 'k.revoked_at', 'w.plan', 'b.plan as billing_plan');
  return (row as KeyRecord | undefined) ?? null;
}

/**
 * One read per key at a time: when an entry expires under load, every request in flight for
 * that key would otherwise send the same query at once (32 connections, 32 queries every
 * AUTH_CACHE_MS). They wait for the one read instead. An invalidation (cache.clear()) while it
 * runs drops its result, so a read that began before an edit never repopulates the cache.
 */
const loading = new Map<string, Promise<{ record: KeyRecord | null; at: number }>>();
let generation = 0;

function reload(hash: string, now: number): Promise<{ record: KeyRecord | null; at: number }> {
  let pending = loading.get(hash);
  if (!pending) {
    const startedIn = generation;
    const read: Promise<{ record: KeyRecord | null; at: number }> = loadKey(hash)
      .then((record) => {
        const entry = { record, at: now };
        if (startedIn === generation) {
          cache.set(hash, entry);
          if (cache.size > 50_000) cache.delete(cache.keys().next().value as string);
        }
        return entry;
      })
      .finally(() => {
        if (loading.get(hash) === read) loading.delete(hash);
      });
    loading.set(hash, read);
    pending = read;
  }
  return pending;
}

const lastUsedWritten = new Map<string, number>();

export async function authenticateApiKey(token: string): Promise<AuthContext> {
  subscribeOnce();
  if (!/^svc_sk_(live|test)_[A-Za-z0-9]{20,100}$/.test(token)) throw errors.invalidToken();
  const hash = keyedHash(token);
  const now = Date.now();
  let entry = cache.get(hash);
  if (!entry || now - entry.at > config.authCacheMs) entry = await reload(hash, now);
  const key = entry.record;
  if (!key) throw errors.invalidToken();
  if (key.revoked_at) throw errors.keyRevoked();
  if (key.expires_at && key.expires_at.getTime() <= now) throw errors.keyExpired();

  // Best effort and throttled: last use is for operators, not worth a write per request.
  if ((lastUsedWritten.get(key.id) ?? 0) < now - 60_000) {
    lastUsedWritten.set(key.id, now);
    db()('api_keys')
      .where({ id: key.id })
      .update({ last_used_at: new Date(now) })
      .catch(() => {});
  }
  return {
    principal: { type: 'api_key', id: key.id, scopes: key.scopes },
    workspaceId: key.workspace_id,
    gatingPlan: key.billing_plan ?? key.plan,
    scopes: new Set(key.scopes),
    role: 'admin',
    projectIds: null,
    reach: 'member',
  };
}
