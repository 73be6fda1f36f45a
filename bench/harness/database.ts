import { recreateDatabase } from '../../tooling/databases';

// A bench's own database and Redis db; modules that read configuration load lazily, after the
// bench has set its environment.

/** Empties the bench's Redis database (rate-limit windows, caches of an earlier run). */
export async function flushRedis(url: string): Promise<void> {
  const { checkRedis, describeStartupError } = await import('../../lib/preflight');
  await checkRedis(url).catch((err) => Promise.reject(new Error(describeStartupError(err))));
  const r = new (await import('ioredis')).Redis(url);
  await r.flushdb();
  r.disconnect();
}

/** A bench's own stores made empty: the database recreated and migrated, the Redis db flushed. */
export async function resetStores(databaseUrl: string, redisUrl: string): Promise<void> {
  await recreateDatabase(databaseUrl);
  await flushRedis(redisUrl);
}

/** This process's connections to the app's database and Redis (lib/db, lib/redis) closed, so the bench can exit. */
export async function closeStores(): Promise<void> {
  const [{ closeDb }, { closeRedis }] = await Promise.all([import('../../lib/db'), import('../../lib/redis')]);
  await Promise.allSettled([closeDb(), closeRedis()]);
}

/**
 * A bench's environment, set before the first app module loads (the children inherit it): its own
 * stores, rate limits that never refuse (the limiter still runs), production mode; `more` adds.
 */
export function setBenchEnvironment(databaseUrl: string, redisUrl: string, more: Record<string, string> = {}): void {
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    RATE_LIMIT_WRITE: '10000000',
    RATE_LIMIT_READ: '10000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    NODE_ENV: 'production',
    ...more,
  });
}

/** setBenchEnvironment for a bench that publishes through a worker: its Temporal and task queue, the simulator, no publish delay. */
export function setPublishingEnvironment(
  o: { databaseUrl: string; redisUrl: string; temporalPort: number; taskQueue: string; simPort: number },
  more: Record<string, string> = {},
): void {
  setBenchEnvironment(o.databaseUrl, o.redisUrl, {
    TEMPORAL_ADDRESS: `127.0.0.1:${o.temporalPort}`,
    TEMPORAL_TASK_QUEUE: o.taskQueue,
    NETWORK_API_URL: `http://127.0.0.1:${o.simPort}`,
    PUBLISH_DELAY_SECONDS: '0',
    ...more,
  });
}
