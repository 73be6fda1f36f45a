// Local stand-in for the social network (ARCHITECTURE.md, "The outside world"): a real HTTP
// server speaking the LinkedIn-style protocol of docs/network-protocol.md, with a control API
// (`/__sim/*`, mirrored in-process as `NetworkSimulator.control`) for scripting what the network
// does: which tokens exist, who administers which organization, which calls fail and how.
//
// It exists so that the publish path can be proven against the failures that matter in
// production: revoked and expired tokens (spec 2.6 connection states, 3.4 revocation after
// repeated failures), transient outages, slow answers, and the worst one for exactly-once
// publishing: the network creates the post but the answer never arrives (spec 3.1, "publish
// exactly once"). Every post it receives is recorded so tests can count what was published.
//
// All state is in maps keyed by what requests look things up by, so a request costs the same
// with 10 posts or 100,000.

import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { config } from '../../lib/config';
import {
  SIM_OPERATIONS,
  SimulatorControlError,
  type ExpireTokenInput,
  type Fault,
  type FaultInput,
  type IssueTokenInput,
  type IssuedToken,
  type LatencyInput,
  type LatencySettings,
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
  type SimulatorControl,
} from './control';
import { MetricsGrowth, ViralCorpus } from './planning';
import { EngagementStore } from './engagement';

export type { SimulatorControl, SimOperation, SimOperationFilter, SimPost, SimCounts, Fault, FaultInput, IssuedToken } from './control';

/** The header carrying the client's post reference on `POST /rest/posts`. */
export const REFERENCE_HEADER = 'X-Idempotency-Key';

const DAY_S = 86_400;
// The network's usual lifetimes: 60-day access tokens, 365-day refresh tokens.
const DEFAULT_ACCESS_TTL_S = 60 * DAY_S;
const DEFAULT_REFRESH_TTL_S = 365 * DAY_S;
/** The network's limit on post text; longer posts fail with 422, as they would in production. */
const MAX_COMMENTARY_CHARS = 3_000;
const MAX_REFERENCE_CHARS = 255;
const MAX_BODY_BYTES = 1 << 20;
/** Image uploads (PUT to the upload URL) may be larger than API calls. */
const MAX_IMAGE_BYTES = 36 << 20;
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** The network's multi-image post takes 2 to 20 images. */
const MAX_POST_IMAGES = 20;
const ACL_DEFAULT_COUNT = 100;
const ACL_MAX_COUNT = 100;
const CONTROL_LIST_DEFAULT_LIMIT = 1_000;
const ID_RE = /^[A-Za-z0-9_-]{1,100}$/;
const VERSION_RE = /^\d{6}(\.\d{2})?$/;
const SCOPES = 'openid profile w_member_social w_organization_social r_organization_admin';

// Post ids keep growing across reset() and across simulators in one process, and start from the
// clock so that a restarted simulator does not hand out URNs a test database already holds.
let shareSeq = Date.now() * 1000;

export interface NetworkSimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the control API has no authentication. */
  host?: string;
  /** Client credentials the token endpoints accept; default config.network.clientId / clientSecret. */
  clientId?: string;
  clientSecret?: string;
}

export interface NetworkSimulator {
  url: string;
  port: number;
  control: SimulatorControl;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// State

interface Person {
  id: string;
  name: string;
  vanityName: string | null;
  pictureUrl: string | null;
}

/** One authorization of the app by a person: revoking it kills every token issued under it. */
interface Grant {
  personId: string;
  createdAt: number;
  refreshToken: string | null;
  refreshExpiresAt: number | null;
  revoked: boolean;
}

interface AccessTokenRecord {
  grant: Grant;
  createdAt: number;
  expiresAt: number;
}

interface PostRecord {
  urn: string;
  author: string;
  authorType: 'person' | 'organization';
  authorId: string;
  createdBy: string;
  text: string;
  reference: string | null;
  visibility: string;
  lifecycleState: string;
  receivedAt: number;
  lastCallAt: number;
  createCalls: number;
  metrics: SimPostMetrics;
  images: SimPostImage[];
}

/** An image registered by initializeUpload; `bytes` stays null until its upload URL received them. */
interface ImageRecord {
  urn: string;
  owner: string;
  uploadToken: string;
  bytes: Buffer | null;
  sha256: string | null;
  contentType: string | null;
  uploadCalls: number;
}

type FaultRecord = Fault;

interface Admins {
  list: string[];
  set: Set<string>;
}

function emptyCalls(): Record<SimOperation, number> {
  return Object.fromEntries(SIM_OPERATIONS.map((op) => [op, 0])) as Record<SimOperation, number>;
}

class SimState {
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
  faults: FaultRecord[] = [];
  latency = new Map<SimOperationFilter, number>();
  nextFaultId = 1;
  counts = {
    createCalls: 0,
    replays: 0,
    tokensIssued: 0,
    refreshes: 0,
    faultsTriggered: 0,
    lostResponses: 0,
    calls: emptyCalls(),
  };
  /** Likes and comments (sim/network/engagement.ts). */
  engagement = new EngagementStore();
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function newToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function invalid(message: string): SimulatorControlError {
  return new SimulatorControlError(400, 'invalid_input', message);
}

function optInt(v: unknown, name: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(`${name} must be an integer between ${min} and ${max}`);
  }
  return v;
}

function checkId(v: unknown, name: string): string {
  if (typeof v !== 'string' || !ID_RE.test(v)) throw invalid(`${name} must match ${ID_RE.source}`);
  return v;
}

function checkOperation(v: unknown, fallback: SimOperationFilter): SimOperationFilter {
  if (v === undefined) return fallback;
  if (v === 'any' || (typeof v === 'string' && (SIM_OPERATIONS as readonly string[]).includes(v))) return v as SimOperationFilter;
  throw invalid(`operation must be "any" or one of ${SIM_OPERATIONS.join(', ')}`);
}

function parseAuthorUrn(s: string): { type: 'person' | 'organization'; id: string } | null {
  const m = /^urn:li:(person|organization):([A-Za-z0-9_-]{1,100})$/.exec(s);
  return m ? { type: m[1] as 'person' | 'organization', id: m[2]! } : null;
}

function toSimPost(p: PostRecord): SimPost {
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
// Responses: handlers build a value instead of writing to the socket, so an injected
// "lost response" can decide after the work is done what (if anything) reaches the client.

interface SimResponse {
  status: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON; undefined sends an empty body. */
  body?: unknown;
}

type ErrorStyle = 'rest' | 'oauth';

/** The network's error body for /rest and /v2: `{ status, serviceErrorCode, code, message }`. */
function restError(status: number, code: string, message: string, headers?: Record<string, string>): SimResponse {
  return { status, headers, body: { status, serviceErrorCode: status, code, message } };
}

/** RFC 6749 section 5.2 error body, used by the /oauth/v2 endpoints. */
/** A request body that is one JSON object, or null (malformed JSON, or another JSON value). */
function jsonObjectOf(rawBody: Buffer): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(rawBody.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function oauthError(status: number, error: string, description: string, headers?: Record<string, string>): SimResponse {
  return { status, headers, body: { error, error_description: description } };
}

const TRANSIENT_CODES: Record<number, string> = {
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};
const PERMANENT_CODES: Record<number, { rest: string; oauth: string }> = {
  400: { rest: 'INVALID_REQUEST', oauth: 'invalid_request' },
  403: { rest: 'ACCESS_DENIED', oauth: 'access_denied' },
  404: { rest: 'NOT_FOUND', oauth: 'invalid_request' },
  409: { rest: 'CONFLICT', oauth: 'invalid_request' },
  422: { rest: 'UNPROCESSABLE_ENTITY', oauth: 'invalid_request' },
};

function faultResponse(fault: FaultRecord, style: ErrorStyle): SimResponse {
  const status = fault.status ?? (fault.kind === 'permanent' ? 400 : 503);
  const headers: Record<string, string> = {};
  if (fault.retryAfterSeconds !== null) headers['retry-after'] = String(fault.retryAfterSeconds);
  const message = `simulated ${fault.kind} failure (fault ${fault.id})`;
  if (fault.kind === 'permanent') {
    const codes = PERMANENT_CODES[status] ?? PERMANENT_CODES[400]!;
    return style === 'oauth' ? oauthError(status, codes.oauth, message, headers) : restError(status, codes.rest, message, headers);
  }
  const code = TRANSIENT_CODES[status] ?? 'SERVICE_UNAVAILABLE';
  return style === 'oauth' ? oauthError(status, 'temporarily_unavailable', message, headers) : restError(status, code, message, headers);
}

// ---------------------------------------------------------------------------------------------
// The simulator

interface Route {
  operation: SimOperation;
  style: ErrorStyle;
  handle(req: IncomingMessage, url: URL, body: Buffer, pathParam: string | null): SimResponse;
}

class Simulator {
  private state = new SimState();
  // planning: organic metrics growth and the viral-post corpus (sim/network/planning.ts).
  private readonly growth = new MetricsGrowth();
  private readonly viral = new ViralCorpus();
  private readonly clientId: string;
  private readonly clientSecret: string;
  private readonly sleeps = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  closed = false;
  readonly control: SimulatorControl;

  constructor(opts: NetworkSimulatorOptions) {
    this.clientId = opts.clientId ?? config.network.clientId;
    this.clientSecret = opts.clientSecret ?? config.network.clientSecret;
    this.control = this.buildControl();
  }

  // ----- control (in-process; the HTTP control API calls the same methods) -----

  private buildControl(): SimulatorControl {
    // Async on purpose: the in-process control has exactly the signatures of the HTTP one.
    return {
      health: async () => ({ ok: true as const }),
      issueToken: async (input) => this.issueToken(input),
      revokeToken: async (input) => this.revokeToken(input),
      expireToken: async (input) => this.expireToken(input),
      setOrganizationAdmins: async (orgId, personIds) => this.setOrganizationAdmins(orgId, personIds),
      getOrganizationAdmins: async (orgId) => {
        checkId(orgId, 'organizationId');
        return { organizationId: orgId, personIds: [...(this.state.orgAdmins.get(orgId)?.list ?? [])] };
      },
      addFault: async (input) => this.addFault(input),
      listFaults: async () => this.state.faults.map((f) => ({ ...f })),
      clearFaults: async () => {
        this.state.faults = [];
      },
      setLatency: async (input) => this.setLatency(input),
      getLatency: async () => Object.fromEntries(this.state.latency) as LatencySettings,
      listPosts: async (filter) => this.listPosts(filter ?? {}),
      getPost: async (urn) => {
        const p = this.state.postsByUrn.get(urn);
        return p ? toSimPost(p) : null;
      },
      setPostMetrics: async (urn, metrics) => this.setPostMetrics(urn, metrics),
      seedPosts: async (input) => this.seedPosts(input),
      counts: async () => this.countsSnapshot(),
      reset: async () => {
        this.state = new SimState();
      },
      // planning
      setMetricsGrowth: async (input) => {
        try {
          return this.growth.set(input);
        } catch (err) {
          throw invalid((err as Error).message);
        }
      },
      addViralPosts: async (posts) => {
        try {
          return this.viral.add(posts);
        } catch (err) {
          throw invalid((err as Error).message);
        }
      },
      // engagement
      listEngagement: async (postUrn) => this.state.engagement.of(postUrn),
    };
  }

  private issueToken(input: IssueTokenInput): IssuedToken {
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

    const s = this.state;
    const person = s.persons.get(personId) ?? { id: personId, name: `Person ${personId}`, vanityName: null, pictureUrl: null };
    if (input.name !== undefined) person.name = input.name;
    if (input.vanityName !== undefined) person.vanityName = input.vanityName;
    if (input.pictureUrl !== undefined) person.pictureUrl = input.pictureUrl;
    s.persons.set(personId, person);

    const now = Date.now();
    const withRefresh = input.withRefreshToken ?? true;
    const grant: Grant = {
      personId,
      createdAt: now,
      refreshToken: withRefresh ? newToken('AQR') : null,
      refreshExpiresAt: withRefresh ? now + refreshTtl * 1000 : null,
      revoked: false,
    };
    if (grant.refreshToken) s.grantsByRefresh.set(grant.refreshToken, grant);
    let personGrants = s.grantsByPerson.get(personId);
    if (!personGrants) s.grantsByPerson.set(personId, (personGrants = new Set()));
    personGrants.add(grant);
    const accessToken = this.mintAccessToken(grant, ttl, now);
    s.counts.tokensIssued++;
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

  private mintAccessToken(grant: Grant, ttlS: number, now: number): string {
    const token = newToken('AQV');
    this.state.accessTokens.set(token, { grant, createdAt: now, expiresAt: now + ttlS * 1000 });
    return token;
  }

  private revokeToken(input: RevokeTokenInput): { revokedGrants: number } {
    if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
    const s = this.state;
    if ('personId' in input && input.personId !== undefined) {
      const grants = s.grantsByPerson.get(checkId(input.personId, 'personId')) ?? new Set<Grant>();
      let n = 0;
      for (const g of grants) {
        if (!g.revoked) n++;
        g.revoked = true;
      }
      return { revokedGrants: n };
    }
    const token = (input as { token?: unknown }).token;
    if (typeof token !== 'string' || token === '') throw invalid('token or personId is required');
    const grant = s.accessTokens.get(token)?.grant ?? s.grantsByRefresh.get(token);
    if (!grant) throw new SimulatorControlError(404, 'not_found', 'no such token');
    const n = grant.revoked ? 0 : 1;
    grant.revoked = true;
    return { revokedGrants: n };
  }

  private expireToken(input: ExpireTokenInput): { expired: Array<'access' | 'refresh'> } {
    if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
    if (typeof input.token !== 'string' || input.token === '') throw invalid('token is required');
    if (input.includeRefresh !== undefined && typeof input.includeRefresh !== 'boolean') throw invalid('includeRefresh must be a boolean');
    const s = this.state;
    const now = Date.now();
    const access = s.accessTokens.get(input.token);
    if (access) {
      access.expiresAt = Math.min(access.expiresAt, now);
      const expired: Array<'access' | 'refresh'> = ['access'];
      if (input.includeRefresh && access.grant.refreshExpiresAt !== null) {
        access.grant.refreshExpiresAt = Math.min(access.grant.refreshExpiresAt, now);
        expired.push('refresh');
      }
      return { expired };
    }
    const grant = s.grantsByRefresh.get(input.token);
    if (grant && grant.refreshExpiresAt !== null) {
      grant.refreshExpiresAt = Math.min(grant.refreshExpiresAt, now);
      return { expired: ['refresh'] };
    }
    throw new SimulatorControlError(404, 'not_found', 'no such token');
  }

  private setOrganizationAdmins(orgId: string, personIds: string[]): { organizationId: string; personIds: string[] } {
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
    this.state.orgAdmins.set(orgId, { list, set });
    return { organizationId: orgId, personIds: [...list] };
  }

  private addFault(input: FaultInput): Fault {
    if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
    const kind = input.kind;
    if (kind !== 'transient' && kind !== 'permanent' && kind !== 'lost_response')
      throw invalid('kind must be transient, permanent or lost_response');
    const times = optInt(input.times, 'times', 1, 1_000_000) ?? 1;
    const fault: FaultRecord = {
      id: `flt_${this.state.nextFaultId++}`,
      kind,
      operation: checkOperation(input.operation, kind === 'lost_response' ? 'createPost' : 'any'),
      remaining: times,
      status: null,
      retryAfterSeconds: null,
      lostAs: null,
    };
    if (input.kind === 'transient') {
      const status = input.status ?? 503;
      if (!(status in TRANSIENT_CODES)) throw invalid(`transient status must be one of ${Object.keys(TRANSIENT_CODES).join(', ')}`);
      fault.status = status;
      fault.retryAfterSeconds = optInt(input.retryAfterSeconds, 'retryAfterSeconds', 0, 86_400) ?? null;
    } else if (input.kind === 'permanent') {
      const status = input.status ?? 400;
      if (!(status in PERMANENT_CODES)) throw invalid(`permanent status must be one of ${Object.keys(PERMANENT_CODES).join(', ')}`);
      fault.status = status;
    } else {
      const lostAs = input.lostAs ?? 'socket';
      if (lostAs !== 'socket' && lostAs !== '503') throw invalid('lostAs must be "socket" or "503"');
      fault.lostAs = lostAs;
    }
    this.state.faults.push(fault);
    return { ...fault };
  }

  private setLatency(input: LatencyInput): LatencySettings {
    if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
    const ms = optInt(input.ms, 'ms', 0, 600_000);
    if (ms === undefined) throw invalid('ms is required');
    const op = checkOperation(input.operation, 'any');
    if (ms === 0) this.state.latency.delete(op);
    else this.state.latency.set(op, ms);
    return Object.fromEntries(this.state.latency) as LatencySettings;
  }

  private listPosts(filter: ListPostsFilter): { total: number; posts: SimPost[] } {
    if (typeof filter !== 'object' || filter === null) throw invalid('filter must be an object');
    const limit = optInt(filter.limit, 'limit', 0, 1_000_000) ?? CONTROL_LIST_DEFAULT_LIMIT;
    const offset = optInt(filter.offset, 'offset', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    const s = this.state;
    let matches: readonly PostRecord[];
    if (filter.author !== undefined && filter.reference !== undefined) {
      const p = s.postsByAuthorRef.get(`${filter.author}\n${filter.reference}`);
      matches = p ? [p] : [];
    } else if (filter.author !== undefined) {
      matches = s.postsByAuthor.get(filter.author) ?? [];
    } else if (filter.reference !== undefined) {
      matches = s.postsByReference.get(filter.reference) ?? [];
    } else {
      matches = s.posts;
    }
    return { total: matches.length, posts: matches.slice(offset, offset + limit).map(toSimPost) };
  }

  private seedPosts(input: SeedPostsInput): SeedPostsResult {
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
        if (this.state.postsByAuthorRef.has(`${authorUrn}\n${prefix}${i}`))
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

  private setPostMetrics(urn: string, metrics: Partial<SimPostMetrics>): SimPost {
    if (typeof metrics !== 'object' || metrics === null) throw invalid('metrics must be an object');
    const post = this.state.postsByUrn.get(urn);
    if (!post) throw new SimulatorControlError(404, 'not_found', `no post ${urn}`);
    const next = { ...post.metrics };
    for (const key of ['impressions', 'likes', 'comments', 'reshares'] as const) {
      const v = optInt(metrics[key], key, 0, Number.MAX_SAFE_INTEGER);
      if (v !== undefined) next[key] = v;
    }
    post.metrics = next;
    return toSimPost(post);
  }

  private countsSnapshot(): SimCounts {
    const c = this.state.counts;
    return {
      posts: this.state.posts.length,
      createCalls: c.createCalls,
      replays: c.replays,
      tokensIssued: c.tokensIssued,
      refreshes: c.refreshes,
      calls: { ...c.calls },
      faultsTriggered: c.faultsTriggered,
      lostResponses: c.lostResponses,
    };
  }

  // ----- protocol -----

  private takeFault(op: SimOperation): FaultRecord | null {
    const faults = this.state.faults;
    for (let i = 0; i < faults.length; i++) {
      const f = faults[i]!;
      if (f.operation !== 'any' && f.operation !== op) continue;
      f.remaining--;
      if (f.remaining <= 0) faults.splice(i, 1);
      this.state.counts.faultsTriggered++;
      return f;
    }
    return null;
  }

  private latencyFor(op: SimOperation): number {
    return this.state.latency.get(op) ?? this.state.latency.get('any') ?? 0;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.sleeps.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.sleeps.add(entry);
    });
  }

  wakeSleepers(): void {
    for (const s of this.sleeps) {
      clearTimeout(s.timer);
      s.resolve();
    }
    this.sleeps.clear();
  }

  /** Version header check shared by every /rest call: the network refuses unversioned calls. */
  private checkVersion(req: IncomingMessage): SimResponse | null {
    const v = req.headers['linkedin-version'];
    if (typeof v !== 'string' || v === '')
      return restError(
        400,
        'VERSION_MISSING',
        'A version must be present. Please specify a version by adding the LinkedIn-Version header.',
      );
    if (!VERSION_RE.test(v)) return restError(426, 'NONEXISTENT_VERSION', `Requested version ${v} is not active`);
    const restli = req.headers['x-restli-protocol-version'];
    if (restli !== undefined && restli !== '2.0.0')
      return restError(400, 'INVALID_RESTLI_PROTOCOL_VERSION', 'X-Restli-Protocol-Version must be 2.0.0');
    return null;
  }

  private authenticate(req: IncomingMessage): { person: Person } | { error: SimResponse } {
    const header = req.headers.authorization;
    const bearer = { 'www-authenticate': 'Bearer error="invalid_token"' };
    if (!header || header.trim() === '') return { error: restError(401, 'INVALID_ACCESS_TOKEN', 'Empty oauth2 access token', bearer) };
    const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
    if (!m) return { error: restError(401, 'INVALID_ACCESS_TOKEN', 'Unknown authentication scheme', bearer) };
    const rec = this.state.accessTokens.get(m[1]!);
    if (!rec) return { error: restError(401, 'INVALID_ACCESS_TOKEN', 'Invalid access token', bearer) };
    if (rec.grant.revoked)
      return { error: restError(401, 'REVOKED_ACCESS_TOKEN', 'The token used in the request has been revoked by the user', bearer) };
    if (Date.now() >= rec.expiresAt)
      return { error: restError(401, 'EXPIRED_ACCESS_TOKEN', 'The token used in the request has expired', bearer) };
    const person = this.state.persons.get(rec.grant.personId)!;
    return { person };
  }

  /** The checks every versioned REST call makes, in the network's order: version headers, then the token. */
  private restCaller(req: IncomingMessage): { person: Person } | { error: SimResponse } {
    const versionError = this.checkVersion(req);
    if (versionError) return { error: versionError };
    return this.authenticate(req);
  }

  /** A versioned REST route's handler: the caller's version headers and token are checked first (restCaller). */
  private versioned(
    handle: (caller: Person, req: IncomingMessage, url: URL, body: Buffer, pathParam: string | null) => SimResponse,
  ): Route['handle'] {
    return (req, url, body, pathParam) => {
      const auth = this.restCaller(req);
      return 'error' in auth ? auth.error : handle(auth.person, req, url, body, pathParam);
    };
  }

  /** May `personId` act as `authorUrn`? Itself, or an organization it administers. */
  private mayActAs(personId: string, author: { type: 'person' | 'organization'; id: string }): boolean {
    if (author.type === 'person') return author.id === personId;
    return this.state.orgAdmins.get(author.id)?.set.has(personId) ?? false;
  }

  private checkClient(params: URLSearchParams): SimResponse | null {
    if (params.get('client_id') !== this.clientId || params.get('client_secret') !== this.clientSecret) {
      return oauthError(401, 'invalid_client', 'Client authentication failed');
    }
    return null;
  }

  private parseForm(req: IncomingMessage, body: Buffer): URLSearchParams | null {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') return null;
    return new URLSearchParams(body.toString('utf8'));
  }

  readonly routes: Record<string, Route> = {
    'POST /oauth/v2/accessToken': {
      operation: 'refresh',
      style: 'oauth',
      handle: (req, _url, body) => {
        const form = this.parseForm(req, body);
        if (!form) return oauthError(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
        const grantType = form.get('grant_type');
        if (grantType === null) return oauthError(400, 'invalid_request', 'grant_type is required');
        if (grantType !== 'refresh_token')
          return oauthError(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported here`);
        const clientError = this.checkClient(form);
        if (clientError) return clientError;
        const refreshToken = form.get('refresh_token');
        if (!refreshToken) return oauthError(400, 'invalid_request', 'refresh_token is required');
        const grant = this.state.grantsByRefresh.get(refreshToken);
        const now = Date.now();
        // One answer for unknown, revoked and expired, as RFC 6749 prescribes: invalid_grant.
        if (!grant || grant.revoked || grant.refreshExpiresAt === null || now >= grant.refreshExpiresAt) {
          return oauthError(400, 'invalid_grant', 'The provided authorization grant or refresh token is invalid, expired or revoked');
        }
        // A fresh access token each time; the refresh token itself is not rotated and keeps its
        // original expiry (the network's behaviour), and earlier access tokens stay valid until
        // their own expiry, so two workers refreshing at once do not invalidate each other.
        const access = this.mintAccessToken(grant, DEFAULT_ACCESS_TTL_S, now);
        this.state.counts.refreshes++;
        return {
          status: 200,
          body: {
            access_token: access,
            expires_in: DEFAULT_ACCESS_TTL_S,
            refresh_token: grant.refreshToken,
            refresh_token_expires_in: Math.max(0, Math.floor((grant.refreshExpiresAt - now) / 1000)),
            scope: SCOPES,
            token_type: 'Bearer',
          },
        };
      },
    },
    'POST /oauth/v2/introspectToken': {
      operation: 'introspect',
      style: 'oauth',
      handle: (req, _url, body) => {
        const form = this.parseForm(req, body);
        if (!form) return oauthError(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
        const clientError = this.checkClient(form);
        if (clientError) return clientError;
        const token = form.get('token');
        if (!token) return oauthError(400, 'invalid_request', 'token is required');
        const rec = this.state.accessTokens.get(token);
        if (!rec) return { status: 200, body: { active: false } };
        const status = rec.grant.revoked ? 'revoked' : Date.now() >= rec.expiresAt ? 'expired' : 'active';
        return {
          status: 200,
          body: {
            active: status === 'active',
            status,
            client_id: this.clientId,
            authorized_at: Math.floor(rec.grant.createdAt / 1000),
            created_at: Math.floor(rec.createdAt / 1000),
            expires_at: Math.floor(rec.expiresAt / 1000),
            scope: SCOPES,
            auth_type: '3L',
          },
        };
      },
    },
    'GET /v2/userinfo': {
      operation: 'identity',
      style: 'rest',
      handle: (req) => {
        const auth = this.authenticate(req);
        if ('error' in auth) return auth.error;
        const p = auth.person;
        const space = p.name.indexOf(' ');
        const body: Record<string, unknown> = {
          sub: p.id,
          name: p.name,
          given_name: space < 0 ? p.name : p.name.slice(0, space),
          family_name: space < 0 ? '' : p.name.slice(space + 1),
          locale: { country: 'US', language: 'en' },
        };
        if (p.pictureUrl !== null) body.picture = p.pictureUrl;
        if (p.vanityName !== null) body.preferred_username = p.vanityName;
        return { status: 200, body };
      },
    },
    'GET /rest/organizationAcls': {
      operation: 'admins',
      style: 'rest',
      handle: this.versioned((caller, req, url) => {
        const q = url.searchParams;
        if (q.get('q') !== 'organization') return restError(400, 'ILLEGAL_ARGUMENT', 'only the q=organization finder is supported');
        const org = parseAuthorUrn(q.get('organization') ?? '');
        if (!org || org.type !== 'organization') return restError(400, 'ILLEGAL_ARGUMENT', 'organization must be urn:li:organization:<id>');
        const start = Number(q.get('start') ?? '0');
        const count = Number(q.get('count') ?? String(ACL_DEFAULT_COUNT));
        if (!Number.isInteger(start) || start < 0 || !Number.isInteger(count) || count < 1 || count > ACL_MAX_COUNT) {
          return restError(400, 'ILLEGAL_ARGUMENT', `start must be >= 0 and count between 1 and ${ACL_MAX_COUNT}`);
        }
        // Only approved administrators are modelled: any other role or state filter matches nobody.
        const role = q.get('role');
        const state = q.get('state');
        const all =
          (role === null || role === 'ADMINISTRATOR') && (state === null || state === 'APPROVED')
            ? (this.state.orgAdmins.get(org.id)?.list ?? [])
            : [];
        const orgUrn = `urn:li:organization:${org.id}`;
        return {
          status: 200,
          body: {
            elements: all.slice(start, start + count).map((personId) => ({
              organization: orgUrn,
              roleAssignee: `urn:li:person:${personId}`,
              role: 'ADMINISTRATOR',
              state: 'APPROVED',
            })),
            paging: { start, count, total: all.length, links: [] },
          },
        };
      }),
    },
    'POST /rest/posts': {
      operation: 'createPost',
      style: 'rest',
      handle: this.versioned((caller, req, _url, rawBody) => {
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (type !== 'application/json') return restError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
        const body = jsonObjectOf(rawBody);
        if (!body) return restError(400, 'INVALID_REQUEST_BODY', 'body must be a JSON object');
        const author = typeof body.author === 'string' ? parseAuthorUrn(body.author) : null;
        if (!author) return restError(422, 'INVALID_AUTHOR', 'author must be urn:li:person:<id> or urn:li:organization:<id>');
        if (typeof body.commentary !== 'string' || body.commentary.trim() === '')
          return restError(422, 'INVALID_COMMENTARY', 'commentary must be a non-empty string');
        if (body.commentary.length > MAX_COMMENTARY_CHARS)
          return restError(422, 'COMMENTARY_TOO_LONG', `commentary is longer than ${MAX_COMMENTARY_CHARS} characters`);
        const visibility = body.visibility ?? 'PUBLIC';
        if (visibility !== 'PUBLIC' && visibility !== 'CONNECTIONS' && visibility !== 'LOGGED_IN')
          return restError(422, 'INVALID_VISIBILITY', 'visibility must be PUBLIC, CONNECTIONS or LOGGED_IN');
        const lifecycleState = body.lifecycleState ?? 'PUBLISHED';
        if (lifecycleState !== 'PUBLISHED') return restError(422, 'INVALID_LIFECYCLE_STATE', 'only PUBLISHED posts are supported');
        const content = this.parseContent(body.content, `urn:li:${author.type}:${author.id}`);
        if ('error' in content) return content.error;
        const refHeader = req.headers[REFERENCE_HEADER.toLowerCase()];
        let reference: string | null = null;
        if (refHeader !== undefined) {
          if (typeof refHeader !== 'string' || refHeader === '' || refHeader.length > MAX_REFERENCE_CHARS) {
            return restError(400, 'INVALID_IDEMPOTENCY_KEY', `${REFERENCE_HEADER} must be 1 to ${MAX_REFERENCE_CHARS} characters`);
          }
          reference = refHeader;
        }
        // Authorization before the replay lookup: a revoked admin must not learn, or be told
        // "success" about, a post it may no longer write.
        if (!this.mayActAs(caller.id, author)) {
          return restError(403, 'ACCESS_DENIED', `Not enough permissions to post as urn:li:${author.type}:${author.id}`);
        }
        const s = this.state;
        const authorUrn = `urn:li:${author.type}:${author.id}`;
        const now = Date.now();
        s.counts.createCalls++;
        if (reference !== null) {
          const existing = s.postsByAuthorRef.get(`${authorUrn}\n${reference}`);
          if (existing) {
            // The original post, whatever the retry's text: the reference names one publication.
            existing.createCalls++;
            existing.lastCallAt = now;
            s.counts.replays++;
            return { status: 200, headers: { 'x-restli-id': existing.urn, 'x-idempotent-replayed': 'true' } };
          }
        }
        const post = this.recordPost({
          author,
          createdBy: caller.id,
          text: body.commentary,
          reference,
          visibility,
          lifecycleState,
          now,
          createCalls: 1,
          images: content.images,
        });
        return {
          status: 201,
          headers: { 'x-restli-id': post.urn, location: `/rest/posts/${encodeURIComponent(post.urn)}`, 'x-idempotent-replayed': 'false' },
        };
      }),
    },
    // The images API: initializeUpload registers an image owned by an author and answers the URL
    // its bytes go to; the post then references the image URN (docs/network-protocol.md).
    'POST /rest/images': {
      operation: 'initializeImageUpload',
      style: 'rest',
      handle: this.versioned((caller, req, url, rawBody) => {
        if (url.searchParams.get('action') !== 'initializeUpload')
          return restError(400, 'ILLEGAL_ARGUMENT', 'only action=initializeUpload is supported');
        let owner: { type: 'person' | 'organization'; id: string } | null = null;
        try {
          const parsed = JSON.parse(rawBody.toString('utf8')) as { initializeUploadRequest?: { owner?: unknown } };
          const o = parsed?.initializeUploadRequest?.owner;
          owner = typeof o === 'string' ? parseAuthorUrn(o) : null;
        } catch {
          return restError(400, 'INVALID_REQUEST_BODY', 'body must be a JSON object');
        }
        if (!owner)
          return restError(422, 'INVALID_OWNER', 'initializeUploadRequest.owner must be urn:li:person:<id> or urn:li:organization:<id>');
        if (!this.mayActAs(caller.id, owner))
          return restError(403, 'ACCESS_DENIED', `Not enough permissions to upload images for urn:li:${owner.type}:${owner.id}`);
        const image: ImageRecord = {
          urn: `urn:li:image:D${randomBytes(9).toString('hex')}`,
          owner: `urn:li:${owner.type}:${owner.id}`,
          uploadToken: randomBytes(18).toString('base64url'),
          bytes: null,
          sha256: null,
          contentType: null,
          uploadCalls: 0,
        };
        this.state.images.set(image.urn, image);
        this.state.imagesByUploadToken.set(image.uploadToken, image);
        const host = req.headers.host ?? '127.0.0.1';
        return {
          status: 200,
          body: {
            value: {
              uploadUrlExpiresAt: Date.now() + 24 * 3600_000,
              uploadUrl: `http://${host}/dms-uploads/${image.uploadToken}`,
              image: image.urn,
            },
          },
        };
      }),
    },
    'PUT /dms-uploads': {
      operation: 'uploadImage',
      style: 'rest',
      handle: (req, _url, rawBody, param) => {
        const auth = this.authenticate(req);
        if ('error' in auth) return auth.error;
        const image = param === null ? undefined : this.state.imagesByUploadToken.get(param);
        if (!image) return restError(404, 'NOT_FOUND', 'no such upload');
        const owner = parseAuthorUrn(image.owner)!;
        if (!this.mayActAs(auth.person.id, owner)) return restError(403, 'ACCESS_DENIED', 'Not enough permissions to upload this image');
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (!IMAGE_TYPES.has(type))
          return restError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type must be one of ${[...IMAGE_TYPES].join(', ')}`);
        if (rawBody.length === 0) return restError(400, 'EMPTY_UPLOAD', 'the upload has no bytes');
        // A repeated PUT replaces the bytes: uploading twice is harmless.
        image.bytes = rawBody;
        image.sha256 = createHash('sha256').update(rawBody).digest('hex');
        image.contentType = type;
        image.uploadCalls++;
        return { status: 201 };
      },
    },
    'GET /rest/posts': {
      operation: 'findPost',
      style: 'rest',
      handle: this.versioned((caller, req, url, _body, param) => {
        if (param !== null) {
          const post = this.state.postsByUrn.get(param);
          if (!post) return restError(404, 'NOT_FOUND', `no post ${param}`);
          if (!this.mayActAs(caller.id, { type: post.authorType, id: post.authorId }))
            return restError(403, 'ACCESS_DENIED', 'Not enough permissions to read this post');
          return { status: 200, body: this.postView(post) };
        }
        const q = url.searchParams;
        if (q.get('q') !== 'reference') return restError(400, 'ILLEGAL_ARGUMENT', 'only the q=reference finder is supported');
        const author = parseAuthorUrn(q.get('author') ?? '');
        const reference = q.get('reference');
        if (!author) return restError(400, 'ILLEGAL_ARGUMENT', 'author must be urn:li:person:<id> or urn:li:organization:<id>');
        if (!reference) return restError(400, 'ILLEGAL_ARGUMENT', 'reference is required');
        if (!this.mayActAs(caller.id, author))
          return restError(403, 'ACCESS_DENIED', `Not enough permissions to read posts of urn:li:${author.type}:${author.id}`);
        const post = this.state.postsByAuthorRef.get(`urn:li:${author.type}:${author.id}\n${reference}`);
        const elements = post ? [this.postView(post)] : [];
        return { status: 200, body: { elements, paging: { start: 0, count: 1, total: elements.length, links: [] } } };
      }),
    },
    'GET /rest/socialMetadata': {
      operation: 'metrics',
      style: 'rest',
      handle: this.versioned((caller, req, _url, _body, param) => {
        if (param === null) return restError(400, 'ILLEGAL_ARGUMENT', 'a post URN is required: /rest/socialMetadata/{postUrn}');
        const post = this.state.postsByUrn.get(param);
        if (!post) return restError(404, 'NOT_FOUND', `no post ${param}`);
        if (!this.mayActAs(caller.id, { type: post.authorType, id: post.authorId }))
          return restError(403, 'ACCESS_DENIED', 'Not enough permissions to read metrics of this post');
        const m = this.growth.apply(post.urn, post.receivedAt, post.metrics);
        return {
          status: 200,
          body: {
            entity: post.urn,
            reactionSummaries: m.likes > 0 ? { LIKE: { reactionType: 'LIKE', count: m.likes } } : {},
            commentSummary: { count: m.comments, topLevelCount: m.comments },
            shareStatistics: { impressionCount: m.impressions, shareCount: m.reshares },
            commentsState: 'OPEN',
          },
        };
      }),
    },
    // ----- engagement after publish (sim/network/engagement.ts) -----
    'POST /rest/reactions': {
      operation: 'like',
      style: 'rest',
      handle: (req, url, rawBody) => this.engage(req, rawBody, url.searchParams.get('actor'), 'like'),
    },
    'POST /rest/comments': {
      operation: 'comment',
      style: 'rest',
      handle: (req, _url, rawBody) => this.engage(req, rawBody, null, 'comment'),
    },
    // ----- planning: keyword search over the viral-post corpus (sim/network/planning.ts) -----
    'GET /rest/viralPosts': {
      operation: 'search',
      style: 'rest',
      handle: this.versioned((caller, req, url) => {
        const q = url.searchParams;
        if (q.get('q') !== 'search') return restError(400, 'ILLEGAL_ARGUMENT', 'q=search is required');
        const keywords = (q.get('keywords') ?? '').trim();
        if (!keywords || keywords.length > 200) return restError(400, 'ILLEGAL_ARGUMENT', 'keywords must be 1 to 200 characters');
        const num = (name: string, min: number, max: number, fallback: number | null) => {
          const v = q.get(name);
          if (v === null || v === '') return fallback;
          const n = Number(v);
          return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
        };
        const start = num('start', 0, 10_000, 0);
        const count = num('count', 1, 100, 20);
        const minEngagement = num('minEngagement', 0, Number.MAX_SAFE_INTEGER, 0);
        const after = num('publishedAfter', 0, Number.MAX_SAFE_INTEGER, null);
        const before = num('publishedBefore', 0, Number.MAX_SAFE_INTEGER, null);
        if ([start, count, minEngagement, after, before].includes(undefined))
          return restError(
            400,
            'ILLEGAL_ARGUMENT',
            'start, count, minEngagement, publishedAfter and publishedBefore must be integers in range',
          );
        return {
          status: 200,
          body: this.viral.search({
            keywords,
            start: start!,
            count: count!,
            minEngagement: minEngagement!,
            publishedAfter: after ?? null,
            publishedBefore: before ?? null,
          }),
        };
      }),
    },
  };

  /**
   * `content.media` (one image) or `content.multiImage` (2 to 20): every image must exist, be
   * owned by the post's author and have received its bytes, as the network requires.
   */
  private parseContent(content: unknown, authorUrn: string): { images: SimPostImage[] } | { error: SimResponse } {
    if (content === undefined || content === null) return { images: [] };
    if (typeof content !== 'object' || Array.isArray(content))
      return { error: restError(422, 'INVALID_CONTENT', 'content must be an object') };
    const c = content as { media?: { id?: unknown; altText?: unknown }; multiImage?: { images?: unknown } };
    let refs: Array<{ id?: unknown; altText?: unknown }>;
    if (c.media !== undefined) refs = [c.media];
    else if (c.multiImage !== undefined && Array.isArray(c.multiImage.images)) {
      refs = c.multiImage.images as Array<{ id?: unknown; altText?: unknown }>;
      if (refs.length < 2 || refs.length > MAX_POST_IMAGES)
        return { error: restError(422, 'INVALID_CONTENT', `multiImage takes 2 to ${MAX_POST_IMAGES} images`) };
    } else return { error: restError(422, 'INVALID_CONTENT', 'content must carry media or multiImage.images') };
    const images: SimPostImage[] = [];
    for (const r of refs) {
      const image = typeof r?.id === 'string' ? this.state.images.get(r.id) : undefined;
      if (!image) return { error: restError(422, 'INVALID_CONTENT', `unknown image ${String(r?.id)}`) };
      if (image.owner !== authorUrn) return { error: restError(422, 'INVALID_CONTENT', `image ${image.urn} is not owned by ${authorUrn}`) };
      if (!image.bytes) return { error: restError(422, 'INVALID_CONTENT', `image ${image.urn} has not been uploaded`) };
      images.push({
        imageUrn: image.urn,
        altText: typeof r.altText === 'string' ? r.altText : '',
        sha256: image.sha256!,
        bytes: image.bytes.length,
        contentType: image.contentType!,
      });
    }
    return { images };
  }

  /** A like or a comment on a post the network holds, by a person the token acts for (docs/engagement.md). */
  private engage(req: IncomingMessage, rawBody: Buffer, actorParam: string | null, kind: 'like' | 'comment'): SimResponse {
    const versionError = this.checkVersion(req);
    if (versionError) return versionError;
    const auth = this.authenticate(req);
    if ('error' in auth) return auth.error;
    const body = jsonObjectOf(rawBody);
    if (!body) return restError(400, 'INVALID_REQUEST_BODY', 'body must be a JSON object');
    const actor = parseAuthorUrn(kind === 'like' ? (actorParam ?? '') : String(body.actor ?? ''));
    if (!actor) return restError(422, 'INVALID_ACTOR', 'actor must be urn:li:person:<id> or urn:li:organization:<id>');
    if (!this.mayActAs(auth.person.id, actor))
      return restError(403, 'ACCESS_DENIED', `Not enough permissions to act as urn:li:${actor.type}:${actor.id}`);
    const postUrn = String(kind === 'like' ? body.root : body.object);
    if (!this.state.postsByUrn.has(postUrn)) return restError(404, 'NOT_FOUND', `no post ${postUrn}`);
    const actorUrn = `urn:li:${actor.type}:${actor.id}`;
    const ref = req.headers[REFERENCE_HEADER.toLowerCase()];
    const reference = typeof ref === 'string' && ref !== '' ? ref : null;
    let answer;
    if (kind === 'like') {
      if (body.reactionType !== 'LIKE') return restError(422, 'INVALID_REACTION', 'only LIKE reactions are supported');
      answer = this.state.engagement.like(postUrn, actorUrn, Date.now());
    } else {
      const text = (body.message as { text?: unknown } | undefined)?.text;
      if (typeof text !== 'string' || text.trim() === '')
        return restError(422, 'INVALID_MESSAGE', 'message.text must be a non-empty string');
      answer = this.state.engagement.comment(postUrn, actorUrn, text, reference, Date.now());
    }
    return { status: answer.status, headers: { 'x-restli-id': answer.id } };
  }

  /** Stores a post under every index a request may look it up by. */
  private recordPost(f: {
    author: { type: 'person' | 'organization'; id: string };
    createdBy: string;
    text: string;
    reference: string | null;
    visibility: string;
    lifecycleState: string;
    now: number;
    createCalls: number;
    images: SimPostImage[];
  }): PostRecord {
    const s = this.state;
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
    s.posts.push(post);
    s.postsByUrn.set(post.urn, post);
    pushIndex(s.postsByAuthor, authorUrn, post);
    if (f.reference !== null) {
      s.postsByAuthorRef.set(`${authorUrn}\n${f.reference}`, post);
      pushIndex(s.postsByReference, f.reference, post);
    }
    return post;
  }

  private postView(p: PostRecord): Record<string, unknown> {
    return {
      id: p.urn,
      author: p.author,
      commentary: p.text,
      visibility: p.visibility,
      lifecycleState: p.lifecycleState,
      distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
      isReshareDisabledByAuthor: false,
      ...(p.images.length === 1 ? { content: { media: { id: p.images[0]!.imageUrn, altText: p.images[0]!.altText } } } : {}),
      ...(p.images.length > 1
        ? { content: { multiImage: { images: p.images.map((i) => ({ id: i.imageUrn, altText: i.altText })) } } }
        : {}),
      reference: p.reference,
      createdAt: p.receivedAt,
      publishedAt: p.receivedAt,
      lastModifiedAt: p.receivedAt,
    };
  }

  /** Maps a request path to a route; `/rest/posts/{urn}` and `/rest/socialMetadata/{urn}` carry a parameter. */
  resolve(method: string, pathname: string): { route: Route; param: string | null } | { status: number } {
    let base = pathname;
    let param: string | null = null;
    const m = /^\/rest\/(posts|socialMetadata)\/([^/]+)$/.exec(pathname) ?? /^\/(dms-uploads)\/([^/]+)$/.exec(pathname);
    if (m) {
      base = m[1] === 'dms-uploads' ? '/dms-uploads' : `/rest/${m[1]}`;
      try {
        param = decodeURIComponent(m[2]!);
      } catch {
        return { status: 400 };
      }
    }
    const route = this.routes[`${method} ${base}`];
    if (route) return { route, param };
    const known = Object.keys(this.routes).some((k) => k.endsWith(` ${base}`));
    return { status: known ? 405 : 404 };
  }

  /** Runs one protocol call through latency, faults and the handler. */
  async handleProtocol(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const resolved = this.resolve(req.method ?? 'GET', url.pathname);
    if ('status' in resolved) {
      const code = resolved.status === 405 ? 'METHOD_NOT_ALLOWED' : resolved.status === 400 ? 'ILLEGAL_ARGUMENT' : 'RESOURCE_NOT_FOUND';
      send(res, restError(resolved.status, code, `${req.method} ${url.pathname} is not part of the protocol`));
      return;
    }
    const { route, param } = resolved;
    const limit = route.operation === 'uploadImage' ? MAX_IMAGE_BYTES : MAX_BODY_BYTES;
    const body = await readBody(req, limit);
    if (body === null) {
      send(res, restError(413, 'REQUEST_ENTITY_TOO_LARGE', `body larger than ${limit} bytes`));
      return;
    }
    this.state.counts.calls[route.operation]++;
    const delay = this.latencyFor(route.operation);
    // The call goes on after the delay even if the client has given up: a real server does not
    // notice a client timeout, so a slow createPost still publishes. That is the ambiguity a
    // client timeout leaves, and findPostByReference is how a caller resolves it.
    if (delay > 0) await this.sleep(delay);
    if (this.closed) {
      req.socket.destroy();
      return;
    }
    const fault = this.takeFault(route.operation);
    if (fault && fault.kind !== 'lost_response') {
      send(res, faultResponse(fault, route.style));
      return;
    }
    const response = route.handle(req, url, body, param);
    if (fault && fault.kind === 'lost_response') {
      this.state.counts.lostResponses++;
      if (fault.lostAs === '503') {
        send(res, faultResponse({ ...fault, kind: 'transient', status: 503 }, route.style));
      } else {
        res.socket?.destroy();
      }
      return;
    }
    send(res, response);
  }

  /** The control API over HTTP: a thin JSON adapter over `this.control`. */
  async handleControl(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname.slice('/__sim'.length);
    const raw = await readBody(req);
    if (raw === null) return sendControlError(res, new SimulatorControlError(413, 'too_large', 'body too large'));
    let body: unknown = {};
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return sendControlError(res, invalid('body must be JSON'));
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        return sendControlError(res, invalid('body must be a JSON object'));
    }
    const c = this.control;
    const q = url.searchParams;
    const intParam = (name: string): number | undefined => {
      const v = q.get(name);
      if (v === null) return undefined;
      const n = Number(v);
      if (!Number.isInteger(n)) throw invalid(`${name} must be an integer`);
      return n;
    };
    try {
      let result: unknown;
      let m: RegExpExecArray | null;
      if (path === '/health' && method === 'GET') result = await c.health();
      else if (path === '/tokens' && method === 'POST') result = await c.issueToken(body as IssueTokenInput);
      else if (path === '/tokens/revoke' && method === 'POST') result = await c.revokeToken(body as RevokeTokenInput);
      else if (path === '/tokens/expire' && method === 'POST') result = await c.expireToken(body as ExpireTokenInput);
      else if ((m = /^\/organizations\/([^/]+)\/admins$/.exec(path)) && (method === 'GET' || method === 'PUT')) {
        const orgId = decodeURIComponent(m[1]!);
        result =
          method === 'GET'
            ? await c.getOrganizationAdmins(orgId)
            : await c.setOrganizationAdmins(orgId, (body as { personIds?: string[] }).personIds as string[]);
      } else if (path === '/faults' && method === 'GET') result = { faults: await c.listFaults() };
      else if (path === '/faults' && method === 'POST') result = await c.addFault(body as FaultInput);
      else if (path === '/faults' && method === 'DELETE') {
        await c.clearFaults();
        result = { ok: true };
      } else if (path === '/latency' && method === 'GET') result = await c.getLatency();
      else if (path === '/latency' && method === 'PUT') result = await c.setLatency(body as LatencyInput);
      else if (path === '/posts' && method === 'GET') {
        result = await c.listPosts({
          author: q.get('author') ?? undefined,
          reference: q.get('reference') ?? undefined,
          limit: intParam('limit'),
          offset: intParam('offset'),
        });
      } else if ((m = /^\/posts\/([^/]+)\/metrics$/.exec(path)) && method === 'PUT') {
        result = await c.setPostMetrics(decodeURIComponent(m[1]!), body as Partial<SimPostMetrics>);
      } else if ((m = /^\/posts\/([^/]+)$/.exec(path)) && method === 'GET') {
        const post = await c.getPost(decodeURIComponent(m[1]!));
        if (!post) throw new SimulatorControlError(404, 'not_found', 'no such post');
        result = post;
      } else if (path === '/posts/seed' && method === 'POST') result = await c.seedPosts(body as SeedPostsInput);
      else if (path === '/counts' && method === 'GET') result = await c.counts();
      // planning: metrics growth and the viral-post corpus
      else if (path === '/metrics-growth' && method === 'PUT') result = await c.setMetricsGrowth(body as never);
      else if (path === '/viral-posts' && method === 'POST') result = await c.addViralPosts((body as { posts?: never })?.posts as never);
      // engagement
      else if ((m = /^\/engagement\/([^/]+)$/.exec(path)) && method === 'GET') result = await c.listEngagement(decodeURIComponent(m[1]!));
      else if (path === '/reset' && method === 'POST') {
        await c.reset();
        result = { ok: true };
      } else throw new SimulatorControlError(404, 'not_found', `${method} /__sim${path} is not a control route`);
      send(res, { status: 200, body: result });
    } catch (err) {
      if (err instanceof SimulatorControlError) return sendControlError(res, err);
      if (err instanceof URIError) return sendControlError(res, invalid('malformed percent-encoding in path'));
      throw err;
    }
  }
}

function sendControlError(res: ServerResponse, err: SimulatorControlError): void {
  send(res, { status: err.status, body: { error: { code: err.code, message: err.message } } });
}

function send(res: ServerResponse, r: SimResponse): void {
  if (res.destroyed || res.headersSent) return;
  const payload = r.body === undefined ? '' : JSON.stringify(r.body);
  const headers: Record<string, string | number> = { ...r.headers, 'content-length': Buffer.byteLength(payload) };
  if (r.body !== undefined) headers['content-type'] = 'application/json';
  res.writeHead(r.status, headers);
  res.end(payload);
}

/** The whole request body, or null when it is larger than the limit. */
async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) tooLarge = true;
    else chunks.push(chunk);
  }
  return tooLarge ? null : Buffer.concat(chunks);
}

export async function startNetworkSimulator(opts: NetworkSimulatorOptions = {}): Promise<NetworkSimulator> {
  const sim = new Simulator(opts);
  const host = opts.host ?? '127.0.0.1';

  const server = http.createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://simulator');
    } catch {
      send(res, restError(400, 'ILLEGAL_ARGUMENT', 'malformed request target'));
      return;
    }
    const work =
      url.pathname === '/__sim' || url.pathname.startsWith('/__sim/')
        ? sim.handleControl(req, res, url)
        : sim.handleProtocol(req, res, url);
    work.catch((err: unknown) => {
      // A simulator bug must show up as a 500 in the test that hit it, not crash the process.
      send(res, restError(500, 'INTERNAL_SERVER_ERROR', `simulator error: ${(err as Error)?.message ?? String(err)}`));
    });
  });
  // Clients keep connections alive between calls; a short idle timeout keeps close() prompt.
  server.keepAliveTimeout = 2_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    control: sim.control,
    close() {
      closing ??= new Promise<void>((resolve) => {
        sim.closed = true;
        sim.wakeSleepers();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
