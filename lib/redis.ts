import { Redis } from 'ioredis';
import { config } from './config';

let shared: Redis | undefined;

/**
 * Reconnection attempts at most this far apart. ioredis' default back-off grows to 2 s, and a
 * command issued while Redis is unreachable fails only after maxRetriesPerRequest + 1 of them:
 * up to 6 s per command, so a request that needs Redis during an outage took 8 to 15 s to get its
 * 503 (docs/reliability.md "When Redis is down"). Capped, it fails within about 1.5 s, and the
 * client is back within half a second of Redis.
 */
export const RECONNECT_MAX_DELAY_MS = 500;
const retryStrategy = (times: number) => Math.min(times * 50, RECONNECT_MAX_DELAY_MS);

/**
 * The shared client writes each command as it is issued. Auto-pipelining (commands of one tick
 * batched into one write, sent from a setImmediate) cost the rate limiter's one EVALSHA per
 * request about 35 µs more of the API's CPU at the concurrency of one process (bench/README.md,
 * reads), and batched nothing at 32 concurrent callers in a microbenchmark either.
 */
export function redis(): Redis {
  if (!shared) {
    shared = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableAutoPipelining: false, lazyConnect: false, retryStrategy });
    shared.on('error', () => {
      /* reconnects on its own; callers see command errors */
    });
  }
  return shared;
}

/** A second connection for SUBSCRIBE (a subscribed connection cannot run commands). */
export function newRedisConnection(): Redis {
  const r = new Redis(config.redisUrl, { maxRetriesPerRequest: null, retryStrategy });
  r.on('error', () => {});
  return r;
}

export async function closeRedis(): Promise<void> {
  if (shared) {
    const r = shared;
    shared = undefined;
    await r.quit().catch(() => r.disconnect());
  }
}
