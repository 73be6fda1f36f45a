// What the simulated network knows (docs/network-protocol.md, "Simulator"): persons and their
// grants and tokens, organization administrators, posts and images, faults, latency and counts,
// with the control operations that script them. `reset()` replaces the whole SimState.
//
// All state is in maps keyed by what requests look things up by, so a request costs the same
// with 10 posts or 100,000.

import { randomBytes } from 'node:crypto';
import {
  SIM_OPERATIONS,
  SimulatorControlError,
  type ExpireTokenInput,
  type Fault,
  type IssueTokenInput,
  type IssuedToken,
  type ListPostsFilter,
  type RevokeTokenInput,
  type SeedPostsInput,
  type SeedPostsResult,
  type SimCounts,
  type SimOperation,
  type SimOperationFilter,
  type SimPost,
  type SimPostImage,
  type SimPostMetrics,
} from './control';
import { EngagementStore } from './engagement';

const DAY_S = 86_400;
// The network's usual lifetimes: 60-day access tokens, 365-day refresh tokens.
export const DEFAULT_ACCESS_TTL_S = 60 * DAY_S;
const DEFAULT_REFRESH_TTL_S = 365 * DAY_S;
export const MAX_REFERENCE_CHARS = 255;
const CONTROL_LIST_DEFAULT_LIMIT = 1_000;
const ID_RE = /^[A-Za-z0-9_-]{1,100}$/;

// Post ids keep growing across reset() and across simulators in one process, and start from the
// clock so that a restarted simulator does not hand out URNs a test database already holds.
let shareSeq = Date.now() * 1000;

export interface Person {
  id: string;
  name: string;
  vanityName: string | null;
  pictureUrl: string | null;
}

/** One authorization of the app by a person: revoking it kills every token issued under it. */
export interface Grant {
  personId: string;
  createdAt: number;
  refreshToken: string | null;
  refreshExpiresAt: number | null;
  revoked: boolean;
}

export interface AccessTokenRecord {
  grant: Grant;
  createdAt: number;
  expiresAt: number;
}

/** A post as stored: the control API's SimPost (control.ts), with epoch-ms times and its lifecycle state. */
export interface PostRecord extends Omit<SimPost, 'postUrn' | 'receivedAt' | 'lastCallAt'> {
  urn: string;
  lifecycleState: string;
  receivedAt: number;
  lastCallAt: number;
}

/** An image registered by initializeUpload; `bytes` stays null until its upload URL received them. */
export interface ImageRecord {
  urn: string;
  owner: string;
  uploadToken: string;
  bytes: Buffer | null;
  sha256: string | null;
  contentType: string | null;
  uploadCalls: number;
}

export type AuthorRef = { type: 'person' | 'organization'; id: string };

interface Admins {
  list: string[];
  set: Set<string>;
}

function emptyCalls(): Record<SimOperation, number> {
  return Object.fromEntries(SIM_OPERATIONS.map((op) => [op, 0])) as Record<SimOperation, number>;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function newToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function invalid(message: string): SimulatorControlError {
  return new SimulatorControlError(400, 'invalid_input', message);
}

export function optInt(v: unknown, name: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(`${name} must be an integer between ${min} and ${max}`);
  }
  return v;
}

export function checkId(v: unknown, name: string): string {
  if (typeof v !== 'string' || !ID_RE.test(v)) throw invalid(`${name} must match ${ID_RE.source}`);
  return v;
}

export function parseAuthorUrn(s: string): AuthorRef | null {
  const m = /^urn:li:(person|organization):([A-Za-z0-9_-]{1,100})$/.exec(s);
  return m ? { type: m[1] as 'person' | 'organization', id: m[2]! } : null;
}

export function toSimPost(p: PostRecord): SimPost {
  return {
    postUrn: p.urn,
    author: p.author,
    authorType: p.authorType,
    authorId: p.authorId,
    createdBy: p.createdBy,
    text: p.text,
    reference: p.reference,
    visibility: p.visibility,
    receivedAt: iso(p.receivedAt),
    lastCallAt: iso(p.lastCallAt),
    createCalls: p.createCalls,
    metrics: { ...p.metrics },
    images: p.images.map((i) => ({ ...i })),
  };
}

function pushIndex<K>(map: Map<K, PostRecord[]>, key: K, post: PostRecord): void {
  const list = map.get(key);
  if (list) list.push(post);
  else map.set(key, [post]);
}

// ---------------------------------------------------------------------------------------------
// The state

export class SimState {
  persons = new Map<string, Person>();
  grantsByRefresh = new Map<string, Grant>();
  accessTokens = new Map<string, AccessTokenRecord>();
  grantsByPerson = new Map<string, Set<Grant>>();
  orgAdmins = new Map<string, Admins>();
  posts: PostRecord[] = [];
  postsByUrn = new Map<string, PostRecord>();
  /** `${authorUrn}\n${reference}`: references are scoped to an author. */
  postsByAuthorRef = new Map<string, PostRecord>();
  postsByAuthor = new Map<string, PostRecord[]>();
  postsByReference = new Map<string, PostRecord[]>();
  images = new Map<string, ImageRecord>();
  imagesByUploadToken = new Map<string, ImageRecord>();
  /** Pending faults in the order added, and latency per operation (sim/network/faults.ts). */
  faults: Fault[] = [];
  latency = new Map<SimOperationFilter, number>();
  nextFaultId = 1;
  counts = {
    createCalls: 0,
    replays: 0,
    tokensIssued: 0,
    refreshes: 0,
    faultsTriggered: 0,
    lostResponses: 0,
    connections: 0,
    calls: emptyCalls(),
  };
  /** Likes and comments (sim/network/engagement.ts). */
  engagement = new EngagementStore();

  // ----- tokens -----

  issueToken(input: IssueTokenInput): IssuedToken {
    if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
    const personId = checkId(input.personId, 'personId');
    if (input.name !== undefined && (typeof input.name !== 'string' || input.name.trim() === ''))
      throw invalid('name must be a non-empty string');
    if (
      input.vanityName !== undefined &&
      input.vanityName !== null &&
      (typeof input.vanityName !== 'string' || !ID_RE.test(input.vanityName))
    ) {
      throw invalid('vanityName must be a slug (letters, digits, - and _) or null');
    }
    if (input.pictureUrl !== undefined && input.pictureUrl !== null && typeof input.pictureUrl !== 'string')
      throw invalid('pictureUrl must be a string or null');
    const ttl = optInt(input.expiresInSeconds, 'expiresInSeconds', 0, 10 * 365 * DAY_S) ?? DEFAULT_ACCESS_TTL_S;
    const refreshTtl = optInt(input.refreshExpiresInSeconds, 'refreshExpiresInSeconds', 0, 10 * 365 * DAY_S) ?? DEFAULT_REFRESH_TTL_S;
    if (input.withRefreshToken !== undefined && typeof input.withRefreshToken !== 'boolean')
      throw invalid('withRefreshToken must be a boolean');

    const person = this.persons.get(personId) ?? { id: personId, name: `Person ${personId}`, vanityName: null, pictureUrl: null };
    if (input.name !== undefined) person.name = input.name;
    if (input.vanityName !== undefined) person.vanityName = input.vanityName;
    if (input.pictureUrl !== undefined) person.pictureUrl = input.pictureUrl;
    this.persons.set(personId, person);

    const now = Date.now();
    const withRefresh = input.withRefreshToken ?? true;
    const grant: Grant = {
      personId,
      createdAt: now,
      refreshToken: withRefresh ? newToken('AQR') : null,
      refreshExpiresAt: withRefresh ? now + refreshTtl * 1000 : null,
      revoked: false,
    };
    if (grant.refreshToken) this.grantsByRefresh.set(grant.refreshToken, grant);
    let personGrants = this.grantsByPerson.get(personId);
    if (!personGrants) this.grantsByPerson.set(personId, (personGrants = new Set()));
    personGrants.add(grant);
    const accessToken = this.mintAccessToken(grant, ttl, now);
    this.counts.tokensIssued++;
    return {
      personId,
      personUrn: `urn:li:person:${personId}`,
      accessToken,
      expiresAt: iso(now + ttl * 1000),
      expiresInSeconds: ttl,
      refreshToken: grant.refreshToken,
      refreshTokenExpiresAt: grant.refreshExpiresAt === null ? null : iso(grant.refreshExpiresAt),
    };
  }

  mintAccessToken(grant: Grant, ttlS: number, now: number): string {
    const token = newToken('AQV');
    this.accessTokens.set(token, { grant, createdAt: now, expiresAt: now + ttlS * 1000 });
    return token;
  }

  revokeToken(input: RevokeTokenInput): { revokedGrants: number } {
    if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
    if ('personId' in input && input.personId !== undefined) {
      const grants = this.grantsByPerson.get(checkId(input.personId, 'personId')) ?? new Set<Grant>();
      let n = 0;
      for (const g of grants) {
        if (!g.revoked) n++;
        g.revoked = true;
      }
      return { revokedGrants: n };
    }
    const token = (input as { token?: unknown }).token;
    if (typeof token !== 'string' || token === '') throw invalid('token or personId is required');
    const grant = this.accessTokens.get(token)?.grant ?? this.grantsByRefresh.get(token);
    if (!grant) throw new SimulatorControlError(404, 'not_found', 'no such token');
    const n = grant.revoked ? 0 : 1;
    grant.revoked = true;
    return { revokedGrants: n };
  }

  expireToken(input: ExpireTokenInput): { expired: Array<'access' | 'refresh'> } {
    if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
    if (typeof input.token !== 'string' || input.token === '') throw invalid('token is required');
    if (input.includeRefresh !== undefined && typeof input.includeRefresh !== 'boolean') throw invalid('includeRefresh must be a boolean');
    const now = Date.now();
    const access = this.accessTokens.get(input.token);
    if (access) {
      access.expiresAt = Math.min(access.expiresAt, now);
      const expired: Array<'access' | 'refresh'> = ['access'];
      if (input.includeRefresh && access.grant.refreshExpiresAt !== null) {
        access.grant.refreshExpiresAt = Math.min(access.grant.refreshExpiresAt, now);
        expired.push('refresh');
      }
      return { expired };
    }
    const grant = this.grantsByRefresh.get(input.token);
    if (grant && grant.refreshExpiresAt !== null) {
      grant.refreshExpiresAt = Math.min(grant.refreshExpiresAt, now);
      return { expired: ['refresh'] };
    }
    throw new SimulatorControlError(404, 'not_found', 'no such token');
  }

  // ----- organizations -----

  setOrganizationAdmins(orgId: string, personIds: string[]): { organizationId: string; personIds: string[] } {
    checkId(orgId, 'organizationId');
    if (!Array.isArray(personIds)) throw invalid('personIds must be an array');
    const list: string[] = [];
    const set = new Set<string>();
    for (const id of personIds) {
      checkId(id, 'personIds[]');
      if (!set.has(id)) {
        set.add(id);
        list.push(id);
      }
    }
    this.orgAdmins.set(orgId, { list, set });
    return { organizationId: orgId, personIds: [...list] };
  }

  getOrganizationAdmins(orgId: string): { organizationId: string; personIds: string[] } {
    checkId(orgId, 'organizationId');
    return { organizationId: orgId, personIds: [...(this.orgAdmins.get(orgId)?.list ?? [])] };
  }

  /** May `personId` act as `author`? Itself, or an organization it administers. */
  mayActAs(personId: string, author: AuthorRef): boolean {
    if (author.type === 'person') return author.id === personId;
    return this.orgAdmins.get(author.id)?.set.has(personId) ?? false;
  }

  // ----- posts -----

  listPosts(filter: ListPostsFilter): { total: number; posts: SimPost[] } {
    if (typeof filter !== 'object' || filter === null) throw invalid('filter must be an object');
    const limit = optInt(filter.limit, 'limit', 0, 1_000_000) ?? CONTROL_LIST_DEFAULT_LIMIT;
    const offset = optInt(filter.offset, 'offset', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    let matches: readonly PostRecord[];
    if (filter.author !== undefined && filter.reference !== undefined) {
      const p = this.postsByAuthorRef.get(`${filter.author}\n${filter.reference}`);
      matches = p ? [p] : [];
    } else if (filter.author !== undefined) {
      matches = this.postsByAuthor.get(filter.author) ?? [];
    } else if (filter.reference !== undefined) {
      matches = this.postsByReference.get(filter.reference) ?? [];
    } else {
      matches = this.posts;
    }
    return { total: matches.length, posts: matches.slice(offset, offset + limit).map(toSimPost) };
  }

  seedPosts(input: SeedPostsInput): SeedPostsResult {
    if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
    const author = typeof input.author === 'string' ? parseAuthorUrn(input.author) : null;
    if (!author) throw invalid('author must be urn:li:person:<id> or urn:li:organization:<id>');
    const count = optInt(input.count, 'count', 1, 1_000_000);
    if (count === undefined) throw invalid('count is required');
    const prefix = input.referencePrefix;
    if (prefix !== undefined && (typeof prefix !== 'string' || prefix === '' || prefix.length > MAX_REFERENCE_CHARS - 8))
      throw invalid('referencePrefix must be a short non-empty string');
    const text = input.text ?? 'Seeded post';
    if (typeof text !== 'string' || text === '') throw invalid('text must be a non-empty string');
    const authorUrn = `urn:li:${author.type}:${author.id}`;
    if (prefix !== undefined) {
      for (let i = 0; i < count; i++) {
        if (this.postsByAuthorRef.has(`${authorUrn}\n${prefix}${i}`))
          throw invalid(`reference ${prefix}${i} is already used by ${authorUrn}`);
      }
    }
    // Seeded posts were never the subject of a create call: createCalls starts at 0.
    const createdBy = input.createdBy ?? (author.type === 'person' ? author.id : 'seed');
    checkId(createdBy, 'createdBy');
    const now = Date.now();
    let first: PostRecord | null = null;
    let last: PostRecord | null = null;
    for (let i = 0; i < count; i++) {
      last = this.recordPost({
        author,
        createdBy,
        text,
        reference: prefix === undefined ? null : `${prefix}${i}`,
        visibility: 'PUBLIC',
        lifecycleState: 'PUBLISHED',
        now,
        createCalls: 0,
        images: [],
      });
      first ??= last;
    }
    return { created: count, firstPostUrn: first!.urn, lastPostUrn: last!.urn };
  }

  setPostMetrics(urn: string, metrics: Partial<SimPostMetrics>): SimPost {
    if (typeof metrics !== 'object' || metrics === null) throw invalid('metrics must be an object');
    const post = this.postsByUrn.get(urn);
    if (!post) throw new SimulatorControlError(404, 'not_found', `no post ${urn}`);
    const next = { ...post.metrics };
    for (const key of ['impressions', 'likes', 'comments', 'reshares'] as const) {
      const v = optInt(metrics[key], key, 0, Number.MAX_SAFE_INTEGER);
      if (v !== undefined) next[key] = v;
    }
    post.metrics = next;
    return toSimPost(post);
  }

  /** Stores a post under every index a request may look it up by. */
  recordPost(f: {
    author: AuthorRef;
    createdBy: string;
    text: string;
    reference: string | null;
    visibility: string;
    lifecycleState: string;
    now: number;
    createCalls: number;
    images: SimPostImage[];
  }): PostRecord {
    const authorUrn = `urn:li:${f.author.type}:${f.author.id}`;
    const post: PostRecord = {
      urn: `urn:li:share:${++shareSeq}`,
      author: authorUrn,
      authorType: f.author.type,
      authorId: f.author.id,
      createdBy: f.createdBy,
      text: f.text,
      reference: f.reference,
      visibility: f.visibility,
      lifecycleState: f.lifecycleState,
      receivedAt: f.now,
      lastCallAt: f.now,
      createCalls: f.createCalls,
      metrics: { impressions: 0, likes: 0, comments: 0, reshares: 0 },
      images: f.images,
    };
    this.posts.push(post);
    this.postsByUrn.set(post.urn, post);
    pushIndex(this.postsByAuthor, authorUrn, post);
    if (f.reference !== null) {
      this.postsByAuthorRef.set(`${authorUrn}\n${f.reference}`, post);
      pushIndex(this.postsByReference, f.reference, post);
    }
    return post;
  }

  countsSnapshot(): SimCounts {
    const c = this.counts;
    return {
      posts: this.posts.length,
      createCalls: c.createCalls,
      replays: c.replays,
      tokensIssued: c.tokensIssued,
      refreshes: c.refreshes,
      calls: { ...c.calls },
      faultsTriggered: c.faultsTriggered,
      lostResponses: c.lostResponses,
      connections: c.connections,
    };
  }
}
