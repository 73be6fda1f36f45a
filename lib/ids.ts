import { randomFillSync } from 'node:crypto';

// spec 2.1: identifier prefixes. Ids are prefix + 24 chars of base62 (~143 bits).
export const ID_PREFIX = {
  workspace: 'org',
  user: 'usr',
  membership: 'mem',
  project: 'proj',
  connection: 'conn',
  note: 'note',
  post: 'post',
  postStatus: 'pst',
  slot: 'slot',
  source: 'src',
  job: 'job',
  knowledge: 'kb',
  idea: 'idea',
  webhookEndpoint: 'whe',
  webhookDelivery: 'whd',
  upload: 'upl',
  mediaAsset: 'med',
  apiKey: 'key',
  oauthToken: 'oat',
  oauthClient: 'cli',
  oauthGrant: 'grt',
  event: 'evt',
  engagement: 'eng',
  request: 'req',
} as const;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from the CSPRNG 4 KiB at a time and each is handed out once, as Node's
// own randomUUID() does: a request makes ids and tokens of a few dozen bytes, and every
// randomBytes() call is a crypto job of its own (bench/README.md, posts-list: two calls, the
// request id and the rate limiter's entry, were about 7 µs of each request's CPU).
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** Where the next `n` (≤ 4096) unused random bytes of the pool start. */
function takeRandom(n: number): number {
  if (n > pool.length) throw new RangeError(`at most ${pool.length} random bytes at a time`);
  if (poolOffset + n > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const start = poolOffset;
  poolOffset += n;
  return start;
}

export function randomBase62(length: number): string {
  // Rejection sampling keeps the distribution uniform (256 is not a multiple of 62).
  let out = '';
  while (out.length < length) {
    const n = Math.min(length * 2, pool.length);
    const start = takeRandom(n);
    for (let i = start; i < start + n; i++) {
      const b = pool[i]!;
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** `bytes` random bytes as lowercase hex. */
export function randomHex(bytes: number): string {
  const start = takeRandom(bytes);
  return pool.toString('hex', start, start + bytes);
}

export type IdKind = keyof typeof ID_PREFIX;

export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${randomBase62(24)}`;
}
