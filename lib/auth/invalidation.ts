import { log } from '../logger';

// Credential caches live in the API processes (api/auth/apiKeys.ts, api/oauth/*); the code that
// changes credentials lives in lib/ and in the operator tools, which must not import the API.
// This module is the meeting point: writers call the publish functions, and each cache
// registers a local listener here when its module loads. Every API process also subscribes to
// the Redis channels below, so an edit made by another process (bin/admin) reaches it too.

export const AUTH_INVALIDATION_CHANNEL = 'auth:invalidate';
export const OAUTH_INVALIDATION_CHANNEL = 'oauth:invalidate';

/**
 * - `apiKeys`: API-key records and the plans they carry (spec 5.1: effective within 5 s).
 * - `accessTokens`: OAuth access-token records.
 * - `reach`: which workspaces an OAuth user reaches (spec 5.5), per process only.
 * - `client`: one registered OAuth client (detail = client id), per process only.
 */
export type InvalidationTopic = 'apiKeys' | 'accessTokens' | 'reach' | 'client';

// Imported on first publish: the operator CLI loads this module for most commands and
// publishes from few of them.
const redisClient = async () => (await import('../redis')).redis();

const listeners = new Map<InvalidationTopic, Set<(detail: string) => void>>();

export function onLocalInvalidation(topic: InvalidationTopic, listener: (detail: string) => void): void {
  let set = listeners.get(topic);
  if (!set) listeners.set(topic, (set = new Set()));
  set.add(listener);
}

/** Drops this process's cached entries now (no other process is told). */
export function invalidateLocally(topic: InvalidationTopic, detail = ''): void {
  for (const listener of listeners.get(topic) ?? []) listener(detail);
}

/** Tell every API process to drop cached API-key records now (scope edits, revocation, plan change). */
export async function publishAuthInvalidation(reason: string): Promise<void> {
  invalidateLocally('apiKeys', reason);
  await (await redisClient()).publish(AUTH_INVALIDATION_CHANNEL, reason);
}

/** The same for OAuth access tokens (grant or family revoked). */
export async function publishTokenInvalidation(reason: string): Promise<void> {
  invalidateLocally('accessTokens', reason);
  try {
    await (await redisClient()).publish(OAUTH_INVALIDATION_CHANNEL, reason);
  } catch (err) {
    // Other processes then converge within config.authCacheMs.
    log.warn('oauth invalidation publish failed', { err, reason });
  }
}
