// Typed client for the network simulator's control API (`/__sim/*`, docs/network-protocol.md).
// The same `SimulatorControl` interface is implemented in-process by the simulator itself
// (`startNetworkSimulator().control`), so a test can switch between an in-process simulator and
// one in another process (the operator CLI, end-to-end runs) without changing a line.
// Deliberately free of config imports: the caller says which simulator it means.

/** The protocol operations the simulator tells apart for faults, latency and call counts. */
export type SimOperation =
  | 'createPost'
  | 'findPost'
  | 'refresh'
  | 'introspect'
  | 'identity'
  | 'admins'
  | 'metrics'
  | 'search'
  | 'initializeImageUpload'
  | 'uploadImage'
  | 'like'
  | 'comment';
export type SimOperationFilter = SimOperation | 'any';
export const SIM_OPERATIONS: readonly SimOperation[] = [
  'createPost',
  'findPost',
  'refresh',
  'introspect',
  'identity',
  'admins',
  'metrics',
  'search',
  'initializeImageUpload',
  'uploadImage',
  'like',
  'comment',
];

export interface IssueTokenInput {
  personId: string;
  /** Display name; stored on the person and returned by /v2/userinfo. Default `Person <id>` for a new person. */
  name?: string;
  /** Profile slug (`preferred_username` in /v2/userinfo); null clears it. */
  vanityName?: string | null;
  pictureUrl?: string | null;
  /** Access-token lifetime; default 60 days (the network's usual). 0 issues an already-expired token. */
  expiresInSeconds?: number;
  /** Refresh-token lifetime; default 365 days. */
  refreshExpiresInSeconds?: number;
  /** false issues an access token without a refresh token. Default true. */
  withRefreshToken?: boolean;
}

export interface IssuedToken {
  personId: string;
  personUrn: string;
  accessToken: string;
  expiresAt: string;
  expiresInSeconds: number;
  refreshToken: string | null;
  refreshTokenExpiresAt: string | null;
}

export type RevokeTokenInput = { token: string } | { personId: string };

export interface ExpireTokenInput {
  /** An access token (expires it) or a refresh token (expires the refresh token). */
  token: string;
  /** With an access token: also expire the refresh token of the same grant. */
  includeRefresh?: boolean;
}

export type TransientStatus = 429 | 500 | 502 | 503 | 504;
export type PermanentStatus = 400 | 403 | 404 | 409 | 422;

/** What every fault may be narrowed to: the calls made with one access token (one member's, one test's), else every call. */
interface FaultScope {
  accessToken?: string;
}

export type FaultInput = FaultScope &
  (
    | { kind: 'transient'; operation?: SimOperationFilter; times?: number; status?: TransientStatus; retryAfterSeconds?: number }
    | { kind: 'permanent'; operation?: SimOperationFilter; times?: number; status?: PermanentStatus }
    /**
     * The call is processed in full (a post is recorded, a token refreshed) and then the answer is
     * lost: `socket` destroys the connection without a response, `503` answers 503 instead.
     */
    | { kind: 'lost_response'; operation?: SimOperationFilter; times?: number; lostAs?: 'socket' | '503' }
  );

export interface Fault {
  id: string;
  kind: 'transient' | 'permanent' | 'lost_response';
  operation: SimOperationFilter;
  /** Calls still to be affected. */
  remaining: number;
  status: number | null;
  retryAfterSeconds: number | null;
  lostAs: 'socket' | '503' | null;
  /** Only calls made with this access token meet the fault; null: every call. */
  accessToken: string | null;
}

export interface LatencyInput {
  /** Added before the call is processed; 0 removes the setting. */
  ms: number;
  operation?: SimOperationFilter;
}
/** Per-operation latency in ms; an operation without its own entry uses `any`. */
export type LatencySettings = Partial<Record<SimOperationFilter, number>>;

export interface SimPostMetrics {
  impressions: number;
  likes: number;
  comments: number;
  reshares: number;
}

export interface SimPost {
  postUrn: string;
  /** `urn:li:person:<id>` or `urn:li:organization:<id>`. */
  author: string;
  authorType: 'person' | 'organization';
  authorId: string;
  /** The person whose token created the post (differs from the author for organization posts). */
  createdBy: string;
  text: string;
  reference: string | null;
  visibility: string;
  receivedAt: string;
  lastCallAt: string;
  /** Create calls that reached the post store with this author and reference (1 = never retried; 0 = seeded). */
  createCalls: number;
  metrics: SimPostMetrics;
  /** Images the post references (`content.media` / `content.multiImage`), in order, with what was uploaded for each. */
  images: SimPostImage[];
}

export interface SimPostImage {
  imageUrn: string;
  altText: string;
  /** SHA-256 (hex), size and content type of the bytes PUT to the image's upload URL. */
  sha256: string;
  bytes: number;
  contentType: string;
}

export interface ListPostsFilter {
  /** Author URN (`urn:li:person:<id>` / `urn:li:organization:<id>`). */
  author?: string;
  reference?: string;
  limit?: number;
  offset?: number;
}

/** Bulk-records posts without going through the protocol, for load and scale tests. */
export interface SeedPostsInput {
  /** Author URN. */
  author: string;
  count: number;
  /** References `${referencePrefix}0` .. `${referencePrefix}${count - 1}`; none when omitted. */
  referencePrefix?: string;
  text?: string;
  /** Person recorded as creator; default the author for person URNs, `seed` for organizations. */
  createdBy?: string;
}

export interface SeedPostsResult {
  created: number;
  firstPostUrn: string;
  lastPostUrn: string;
}

export interface SimCounts {
  posts: number;
  /** Create calls that reached the post store (new posts plus replays). */
  createCalls: number;
  replays: number;
  tokensIssued: number;
  refreshes: number;
  /** Protocol calls received per operation, including those answered by an injected fault. */
  calls: Record<SimOperation, number>;
  faultsTriggered: number;
  lostResponses: number;
  /** TCP connections accepted: a client that keeps its connections alive opens one for many calls. */
  connections: number;
}

export interface SimulatorControl {
  health(): Promise<{ ok: true }>;
  issueToken(input: IssueTokenInput): Promise<IssuedToken>;
  /** Revokes the whole grant (the access tokens issued from it and its refresh token). */
  revokeToken(input: RevokeTokenInput): Promise<{ revokedGrants: number }>;
  expireToken(input: ExpireTokenInput): Promise<{ expired: Array<'access' | 'refresh'> }>;
  setOrganizationAdmins(organizationId: string, personIds: string[]): Promise<{ organizationId: string; personIds: string[] }>;
  getOrganizationAdmins(organizationId: string): Promise<{ organizationId: string; personIds: string[] }>;
  addFault(input: FaultInput): Promise<Fault>;
  listFaults(): Promise<Fault[]>;
  clearFaults(): Promise<void>;
  setLatency(input: LatencyInput): Promise<LatencySettings>;
  getLatency(): Promise<LatencySettings>;
  listPosts(filter?: ListPostsFilter): Promise<{ total: number; posts: SimPost[] }>;
  getPost(postUrn: string): Promise<SimPost | null>;
  setPostMetrics(postUrn: string, metrics: Partial<SimPostMetrics>): Promise<SimPost>;
  seedPosts(input: SeedPostsInput): Promise<SeedPostsResult>;
  counts(): Promise<SimCounts>;
  /** Forgets everything except the post-id sequence, so post URNs never repeat within a process. */
  reset(): Promise<void>;
  // ----- planning: organic metrics growth and the viral-post corpus -----
  /** Turns organic growth of post metrics on or off; `timeScale` simulated seconds pass per real second. */
  setMetricsGrowth(input: MetricsGrowthInput): Promise<MetricsGrowthSettings>;
  /** Adds posts to the viral-post corpus served by `GET /rest/viralPosts` (on top of the seeded corpus). */
  addViralPosts(posts: ViralPostInput[]): Promise<{ total: number }>;
  // ----- engagement: the likes and comments a post received (docs/engagement.md) -----
  listEngagement(postUrn: string): Promise<SimEngagement>;
}

/** What the simulator recorded for one post: one like per actor, comments with their call counts. */
export interface SimEngagement {
  postUrn: string;
  likes: Array<{ actor: string; at: string; calls: number }>;
  comments: Array<{ urn: string; actor: string; text: string; reference: string | null; at: string; calls: number }>;
}

// ----- planning: organic metrics growth and the viral-post corpus -----

export interface MetricsGrowthInput {
  enabled: boolean;
  timeScale?: number;
}
export interface MetricsGrowthSettings {
  enabled: boolean;
  timeScale: number;
}

export interface ViralPostInput {
  authorName: string;
  text: string;
  /** ISO 8601 date-time. */
  publishedAt: string;
  impressions: number;
  likes: number;
  comments: number;
  reshares: number;
}

/** Thrown by both implementations for bad input (400) and unknown things (404). */
export class SimulatorControlError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'SimulatorControlError';
    this.status = status;
    this.code = code;
  }
}

export class HttpSimulatorControl implements SimulatorControl {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(baseUrl: string, opts: { timeoutMs?: number } = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 10_000;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new SimulatorControlError(0, 'unreachable', `network simulator at ${this.baseUrl} is unreachable: ${(err as Error).message}`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new SimulatorControlError(
        res.status,
        'invalid_response',
        `${method} ${path}: answer is not JSON (is ${this.baseUrl} the network simulator?)`,
      );
    }
    if (!res.ok) {
      const e = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new SimulatorControlError(res.status, e?.code ?? 'error', e?.message ?? `HTTP ${res.status} from ${method} ${path}`);
    }
    return parsed as T;
  }

  health() {
    return this.call<{ ok: true }>('GET', '/__sim/health');
  }
  issueToken(input: IssueTokenInput) {
    return this.call<IssuedToken>('POST', '/__sim/tokens', input);
  }
  revokeToken(input: RevokeTokenInput) {
    return this.call<{ revokedGrants: number }>('POST', '/__sim/tokens/revoke', input);
  }
  expireToken(input: ExpireTokenInput) {
    return this.call<{ expired: Array<'access' | 'refresh'> }>('POST', '/__sim/tokens/expire', input);
  }
  setOrganizationAdmins(organizationId: string, personIds: string[]) {
    return this.call<{ organizationId: string; personIds: string[] }>(
      'PUT',
      `/__sim/organizations/${encodeURIComponent(organizationId)}/admins`,
      { personIds },
    );
  }
  getOrganizationAdmins(organizationId: string) {
    return this.call<{ organizationId: string; personIds: string[] }>(
      'GET',
      `/__sim/organizations/${encodeURIComponent(organizationId)}/admins`,
    );
  }
  addFault(input: FaultInput) {
    return this.call<Fault>('POST', '/__sim/faults', input);
  }
  async listFaults() {
    return (await this.call<{ faults: Fault[] }>('GET', '/__sim/faults')).faults;
  }
  async clearFaults() {
    await this.call<unknown>('DELETE', '/__sim/faults');
  }
  setLatency(input: LatencyInput) {
    return this.call<LatencySettings>('PUT', '/__sim/latency', input);
  }
  getLatency() {
    return this.call<LatencySettings>('GET', '/__sim/latency');
  }
  listPosts(filter: ListPostsFilter = {}) {
    const q = new URLSearchParams();
    if (filter.author !== undefined) q.set('author', filter.author);
    if (filter.reference !== undefined) q.set('reference', filter.reference);
    if (filter.limit !== undefined) q.set('limit', String(filter.limit));
    if (filter.offset !== undefined) q.set('offset', String(filter.offset));
    const qs = q.toString();
    return this.call<{ total: number; posts: SimPost[] }>('GET', `/__sim/posts${qs ? `?${qs}` : ''}`);
  }
  async getPost(postUrn: string) {
    try {
      return await this.call<SimPost>('GET', `/__sim/posts/${encodeURIComponent(postUrn)}`);
    } catch (err) {
      if (err instanceof SimulatorControlError && err.status === 404) return null;
      throw err;
    }
  }
  setPostMetrics(postUrn: string, metrics: Partial<SimPostMetrics>) {
    return this.call<SimPost>('PUT', `/__sim/posts/${encodeURIComponent(postUrn)}/metrics`, metrics);
  }
  seedPosts(input: SeedPostsInput) {
    return this.call<SeedPostsResult>('POST', '/__sim/posts/seed', input);
  }
  counts() {
    return this.call<SimCounts>('GET', '/__sim/counts');
  }
  async reset() {
    await this.call<unknown>('POST', '/__sim/reset');
  }
  // ----- planning -----
  setMetricsGrowth(input: MetricsGrowthInput) {
    return this.call<MetricsGrowthSettings>('PUT', '/__sim/metrics-growth', input);
  }
  addViralPosts(posts: ViralPostInput[]) {
    return this.call<{ total: number }>('POST', '/__sim/viral-posts', { posts });
  }
  listEngagement(postUrn: string) {
    return this.call<SimEngagement>('GET', `/__sim/engagement/${encodeURIComponent(postUrn)}`);
  }
}

export function createSimulatorControl(baseUrl: string, opts: { timeoutMs?: number } = {}): SimulatorControl {
  return new HttpSimulatorControl(baseUrl, opts);
}
