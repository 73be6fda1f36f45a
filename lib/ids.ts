import { randomBytes } from 'node:crypto';

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

export function randomBase62(length: number): string {
  // Rejection sampling keeps the distribution uniform (256 is not a multiple of 62).
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdKind = keyof typeof ID_PREFIX;

export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${randomBase62(24)}`;
}

export function hasPrefix(value: string, kind: IdKind): boolean {
  return value.startsWith(`${ID_PREFIX[kind]}_`);
}
