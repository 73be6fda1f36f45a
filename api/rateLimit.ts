import { randomBytes } from 'node:crypto';
import { config } from '../lib/config';
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

export async function consume(bucket: Bucket, subject: string): Promise<RateLimitResult> {
  const limit = bucketLimit(bucket);
  const member = randomBytes(8).toString('hex');
  const [allowed, remaining, reset, now] = (await redis().eval(
    SCRIPT,
    1,
    `rl:${bucket}:${subject}`,
    config.rateLimit.windowMs,
    limit,
    member,
  )) as number[];
  return {
    allowed: allowed === 1,
    limit,
    remaining: Math.max(0, remaining!),
    resetAt: Math.ceil(reset! / 1000),
    retryAfter: Math.max(1, Math.ceil((reset! - now!) / 1000)),
  };
}
