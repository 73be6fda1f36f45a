import { Redis } from 'ioredis';
import { config } from './config';

let shared: Redis | undefined;

export function redis(): Redis {
  if (!shared) {
    shared = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableAutoPipelining: true, lazyConnect: false });
    shared.on('error', () => {
      /* reconnects on its own; callers see command errors */
    });
  }
  return shared;
}

/** A second connection for SUBSCRIBE (a subscribed connection cannot run commands). */
export function newRedisConnection(): Redis {
  const r = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
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
