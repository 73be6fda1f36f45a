import { createHash } from 'node:crypto';
import { config } from '../lib/config';
import { randomHex } from '../lib/ids';
import { log } from '../lib/logger';
import { rateLimitUnavailable } from '../lib/metrics';
import { redis } from '../lib/redis';

// spec 8: sliding 60-second window per workspace and bucket. One Lua script does the
// trim-count-add atomically on Redis's clock, so every API process shares one budget.
const SCRIPT = `
local key = KEYS[1]
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local member = ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, member)
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', key, window)
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local reset = now + window
if oldest[2] then reset = tonumber(oldest[2]) + window end
return { allowed, limit - count, reset, now }
`;

// Sent by its SHA-1 (EVALSHA): the script's 700 bytes are not written, nor hashed again by
// Redis, on every request. A Redis that does not know it yet (restarted, flushed, SCRIPT FLUSH)
// answers NOSCRIPT once and gets the text (EVAL, which also caches it).
const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

async function runScript(key: string, windowMs: number, limit: number, member: string): Promise<number[]> {
  try {
    return (await redis().evalsha(SCRIPT_SHA, 1, key, windowMs, limit, member)) as number[];
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return (await redis().eval(SCRIPT, 1, key, windowMs, limit, member)) as number[];
  }
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the oldest counted request leaves the window. */
  resetAt: number;
  /** Whole seconds until a request would be admitted again (429 only). */
  retryAfter: number;
}

export type Bucket = 'read' | 'write' | 'unauthenticated';

export function bucketLimit(bucket: Bucket): number {
  return bucket === 'read'
    ? config.rateLimit.readPerWindow
    : bucket === 'write'
      ? config.rateLimit.writePerWindow
      : config.rateLimit.unauthenticatedPerWindow;
}

/**
 * While Redis is unreachable, requests are admitted without counting (fail open), and Redis is
 * not asked again for a few seconds. ARCHITECTURE.md: Redis holds only what may be lost; a rate
 * limit protects the service, it is not part of any answer's correctness, so an outage of the
 * limiter's store must not turn every authenticated request into a 500 (docs/reliability.md).
 */
const REDIS_RETRY_AFTER_MS = 5_000;
let redisDownUntil = 0;

function admittedUncounted(limit: number): RateLimitResult {
  return { allowed: true, limit, remaining: limit, resetAt: Math.ceil((Date.now() + config.rateLimit.windowMs) / 1000), retryAfter: 1 };
}

/** The Redis key of a subject's window in a bucket. */
export const rateLimitKey = (bucket: Bucket, subject: string) => `rl:${bucket}:${subject}`;

export async function consume(bucket: Bucket, subject: string): Promise<RateLimitResult> {
  const limit = bucketLimit(bucket);
  if (Date.now() < redisDownUntil) {
    rateLimitUnavailable.inc({ bucket });
    return admittedUncounted(limit);
  }
  const member = randomHex(8);
  let answer: number[];
  try {
    answer = await runScript(rateLimitKey(bucket, subject), config.rateLimit.windowMs, limit, member);
  } catch (err) {
    redisDownUntil = Date.now() + REDIS_RETRY_AFTER_MS;
    rateLimitUnavailable.inc({ bucket });
    log.warn('rate limiter unavailable: admitting requests uncounted', { bucket, error: err instanceof Error ? err.message : String(err) });
    return admittedUncounted(limit);
  }
  const [allowed, remaining, reset, now] = answer;
  return {
    allowed: allowed === 1,
    limit,
    remaining: Math.max(0, remaining!),
    resetAt: Math.ceil(reset! / 1000),
    retryAfter: Math.max(1, Math.ceil((reset! - now!) / 1000)),
  };
}
