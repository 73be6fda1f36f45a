// The social network behind one small interface (ARCHITECTURE.md, "The outside world"), with a
// real HTTP implementation of the LinkedIn-style protocol in docs/network-protocol.md. Used by
// the publish activities (spec 3.1: publish exactly once, refresh before publishing) and by the
// connection checks behind the connection block (spec 2.6, 3.4).
//
// This client never retries by itself: retries belong to the Temporal activity that calls it,
// which has the schedule, the retry window and the idempotency key. What the client owes that
// caller is a precise verdict on every failure (NetworkError.kind) and the server's Retry-After.

import { config, serviceAddresses } from '../config';
import { HttpTransport, parseJson, parseRetryAfter, type TransportErrors } from '../outbound/outbound';
import { NetworkError, type NetworkErrorCode, type NetworkErrorKind, type NetworkOperation } from './errors';

export { NetworkError, isNetworkError } from './errors';
export type { NetworkErrorKind, NetworkErrorCode, NetworkOperation } from './errors';

export type Author = { type: 'person' | 'organization'; id: string };

/** An image uploaded through the images API, referenced by a post. */
export interface PostImageRef {
  imageUrn: string;
  altText: string;
}

export interface NetworkClient {
  /** reference: client-generated idempotency reference; a retried call with the same reference returns the original post and creates nothing. */
  createPost(input: {
    accessToken: string;
    author: Author;
    text: string;
    reference: string;
    images?: PostImageRef[];
  }): Promise<{ postUrn: string; created: boolean }>;
  /** Images API, step 1: registers an image owned by `owner` and returns where its bytes go. */
  initializeImageUpload(accessToken: string, owner: Author): Promise<{ imageUrn: string; uploadUrl: string }>;
  /** Images API, step 2: PUTs the bytes to the upload URL. Repeating it is harmless. */
  uploadImage(accessToken: string, uploadUrl: string, bytes: Buffer, contentType: string): Promise<void>;
  /** Looks a post up by the reference it was created with: the check before a retry. */
  findPostByReference(accessToken: string, author: Author, reference: string): Promise<{ postUrn: string } | null>;
  refreshAccessToken(
    refreshToken: string,
  ): Promise<{ accessToken: string; expiresAt: Date; refreshToken: string | null; refreshTokenExpiresAt: Date | null }>;
  getIdentity(accessToken: string): Promise<{ personId: string; name: string; vanityName: string | null; pictureUrl: string | null }>;
  listOrganizationAdmins(accessToken: string, organizationId: string): Promise<string[]>; // person ids
  getPostMetrics(accessToken: string, postUrn: string): Promise<{ impressions: number; likes: number; comments: number; reshares: number }>;
  /** Keyword search over high-performing public posts, ranked by engagement (docs/analytics.md, viral posts). */
  searchViralPosts(accessToken: string, query: ViralSearchQuery): Promise<ViralSearchResult>;
  // Engagement after publish (docs/engagement.md): an amplifier account likes or comments on a
  // published post; `reference` makes each exactly-once on the network.
  likePost(input: EngagementInput): Promise<{ created: boolean }>;
  commentOnPost(input: EngagementInput & { text: string }): Promise<{ commentUrn: string; created: boolean }>;
}

// ----- planning: viral post search (docs/network-protocol.md `GET /rest/viralPosts`) -----

/** Who engages (`actor`, a person the token acts for), with which post, under which idempotency reference. */
export interface EngagementInput {
  accessToken: string;
  actor: Author;
  postUrn: string;
  reference: string;
}

export interface ViralSearchQuery {
  keywords: string;
  publishedAfter?: Date;
  publishedBefore?: Date;
  minEngagement?: number;
  start?: number;
  count?: number;
}

export interface ViralPost {
  postUrn: string;
  authorName: string;
  authorVanityName: string | null;
  text: string;
  publishedAt: Date;
  impressions: number;
  likes: number;
  comments: number;
  reshares: number;
  engagement: number;
}

export interface ViralSearchResult {
  posts: ViralPost[];
  total: number;
}

export interface HttpNetworkClientOptions {
  baseUrl: string;
  /** `LinkedIn-Version` header value, YYYYMM (config.network.apiVersion). */
  apiVersion: string;
  clientId: string;
  clientSecret: string;
  /** Per call, covering connect, headers and body. */
  timeoutMs: number;
}

/** Header carrying the post reference on create; the network keeps it as the post's `reference`. */
export const POST_REFERENCE_HEADER = 'X-Idempotency-Key';
const RESTLI_PROTOCOL_VERSION = '2.0.0';
const MAX_REFERENCE_CHARS = 255;
const ACL_PAGE_SIZE = 100;
/** Guards the admin pager against a server whose paging never ends. */
const ACL_MAX_PAGES = 100;
const ID_RE = /^[A-Za-z0-9_-]{1,100}$/;
const POST_URN_RE = /^urn:li:(share|ugcPost):[0-9]{1,30}$/;
const IMAGE_URN_RE = /^urn:li:image:[A-Za-z0-9_-]{1,200}$/;

interface WireResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  body: unknown;
}

type RequestSpec = {
  operation: NetworkOperation;
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  /** An absolute URL the network handed out (an image upload URL), instead of `path`. */
  url?: string;
  /** Raw bytes with their content type, instead of `json` / `form`. */
  raw?: { bytes: Buffer; contentType: string };
  query?: Record<string, string>;
  accessToken?: string;
  /** true for /rest/* calls, which the network refuses without a version header. */
  versioned?: boolean;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
};

function authorUrn(author: Author): string {
  return `urn:li:${author.type}:${author.id}`;
}

function localError(operation: NetworkOperation, message: string): NetworkError {
  // A NetworkError, not a plain Error, so the calling activity stops instead of retrying a call
  // that can never succeed.
  return new NetworkError({ kind: 'permanent', code: 'invalid_request', status: null, operation, message: `${operation}: ${message}` });
}

function checkAuthor(operation: NetworkOperation, author: Author): void {
  if (author?.type !== 'person' && author?.type !== 'organization')
    throw localError(operation, 'author.type must be person or organization');
  if (!ID_RE.test(author.id)) throw localError(operation, 'author.id is not a valid network id');
}

function checkReference(operation: NetworkOperation, reference: string): void {
  if (typeof reference !== 'string' || reference.length === 0 || reference.length > MAX_REFERENCE_CHARS || /[^\x21-\x7e]/.test(reference)) {
    throw localError(operation, `reference must be 1 to ${MAX_REFERENCE_CHARS} visible ASCII characters`);
  }
}

function checkToken(operation: NetworkOperation, token: string): void {
  if (typeof token !== 'string' || token.length === 0 || /\s/.test(token)) throw localError(operation, 'token is empty or malformed');
}

/** The server's machine-readable error code: `code` on /rest and /v2, `error` on /oauth/v2. */
function serverCodeOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  if (typeof b.code === 'string') return b.code;
  if (typeof b.error === 'string') return b.error;
  return null;
}

function serverMessageOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  if (typeof b.message === 'string') return b.message;
  if (typeof b.error_description === 'string') return b.error_description;
  return null;
}

/**
 * Status and server code to a verdict. Messages are never read: they are for humans and change
 * without notice.
 */
function classify(
  operation: NetworkOperation,
  status: number,
  serverCode: string | null,
): { kind: NetworkErrorKind; code: NetworkErrorCode } {
  if (operation === 'refreshAccessToken') {
    // RFC 6749 5.2: invalid_grant covers an unknown, expired or revoked refresh token alike;
    // the user has to reconnect. invalid_client is our own misconfiguration, not the user's,
    // so it must not mark the connection revoked.
    if (serverCode === 'invalid_grant') return { kind: 'auth', code: 'refresh_token_invalid' };
    if (serverCode === 'invalid_client') return { kind: 'permanent', code: 'invalid_client' };
  }
  if (status === 401) {
    switch (serverCode) {
      case 'REVOKED_ACCESS_TOKEN':
        return { kind: 'auth', code: 'token_revoked' };
      case 'EXPIRED_ACCESS_TOKEN':
        return { kind: 'auth', code: 'token_expired' };
      case 'invalid_client':
        return { kind: 'permanent', code: 'invalid_client' };
      default:
        return { kind: 'auth', code: 'invalid_token' };
    }
  }
  if (status === 429) return { kind: 'transient', code: 'rate_limited' };
  if (status === 408) return { kind: 'transient', code: 'timeout' };
  if (status === 503) return { kind: 'transient', code: 'unavailable' };
  if (status >= 500) return { kind: 'transient', code: 'server_error' };
  if (status === 403) return { kind: 'permanent', code: 'forbidden' };
  if (status === 404) return { kind: 'permanent', code: 'not_found' };
  if (status === 409) return { kind: 'permanent', code: 'conflict' };
  if (status === 422) return { kind: 'permanent', code: 'unprocessable' };
  if (status >= 400) return { kind: 'permanent', code: 'invalid_request' };
  return { kind: 'permanent', code: 'unexpected_status' };
}

function invalidResponse(operation: NetworkOperation, status: number, detail: string): NetworkError {
  // Transient on purpose: every call here is safe to repeat (createPost through its reference),
  // and a garbled answer is more often a proxy hiccup than a lasting protocol change.
  return new NetworkError({
    kind: 'transient',
    code: 'invalid_response',
    status,
    operation,
    message: `${operation}: unexpected response: ${detail}`,
  });
}

/** The transport's failures as this operation's NetworkErrors. Messages are never read: they are for humans. */
function networkErrors(op: NetworkOperation): TransportErrors {
  const transient = (code: NetworkErrorCode, message: string, cause: unknown) =>
    new NetworkError({ kind: 'transient', code, status: null, operation: op, message: `${op}: ${message}`, cause });
  return {
    timeout: (ms, cause) => transient('timeout', `no complete answer within ${ms} ms`, cause),
    unreachable: (detail, cause) => transient('connection_error', `connection failed (${detail})`, cause),
    status: ({ status, headers, text }) => {
      const parsed = parseJson(text);
      const serverCode = serverCodeOf(parsed);
      const serverMessage = serverMessageOf(parsed);
      return new NetworkError({
        ...classify(op, status, serverCode),
        status,
        operation: op,
        serverCode,
        retryAfterMs: parseRetryAfter(headers),
        message: `${op}: HTTP ${status}${serverCode ? ` ${serverCode}` : ''}${serverMessage ? `: ${serverMessage}` : ''}`,
      });
    },
  };
}

function nonNegativeInt(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0;
}

export class HttpNetworkClient implements NetworkClient {
  private readonly transport: HttpTransport;
  private readonly apiVersion: string;
  private readonly clientId: string;
  private readonly clientSecret: string;

  constructor(opts: HttpNetworkClientOptions) {
    if (!/^\d{6}(\.\d{2})?$/.test(opts.apiVersion)) throw new Error(`network client: apiVersion must be YYYYMM, got "${opts.apiVersion}"`);
    // Any path prefix of the base URL (a proxy mount point) is kept when joining paths.
    this.transport = new HttpTransport('network client', { baseUrl: opts.baseUrl, timeoutMs: opts.timeoutMs });
    this.apiVersion = opts.apiVersion;
    this.clientId = opts.clientId;
    this.clientSecret = opts.clientSecret;
  }

  async createPost(input: {
    accessToken: string;
    author: Author;
    text: string;
    reference: string;
    images?: PostImageRef[];
  }): Promise<{ postUrn: string; created: boolean }> {
    const op = 'createPost';
    checkToken(op, input.accessToken);
    checkAuthor(op, input.author);
    checkReference(op, input.reference);
    if (typeof input.text !== 'string' || input.text.trim() === '') throw localError(op, 'text is empty');
    const images = input.images ?? [];
    for (const i of images) if (!IMAGE_URN_RE.test(i.imageUrn)) throw localError(op, `"${i.imageUrn}" is not an image URN`);
    // One image is `content.media`; several are `content.multiImage` (docs/network-protocol.md).
    const content =
      images.length === 0
        ? undefined
        : images.length === 1
          ? { media: { id: images[0]!.imageUrn, altText: images[0]!.altText } }
          : { multiImage: { images: images.map((i) => ({ id: i.imageUrn, altText: i.altText })) } };
    const res = await this.request({
      operation: op,
      method: 'POST',
      path: 'rest/posts',
      accessToken: input.accessToken,
      versioned: true,
      headers: { [POST_REFERENCE_HEADER]: input.reference },
      json: {
        author: authorUrn(input.author),
        commentary: input.text,
        visibility: 'PUBLIC',
        distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
        lifecycleState: 'PUBLISHED',
        isReshareDisabledByAuthor: false,
        ...(content ? { content } : {}),
      },
    });
    // 201: created now; 200: the network already had a post under this reference.
    if (res.status !== 201 && res.status !== 200) throw invalidResponse(op, res.status, `status ${res.status}`);
    const id = res.headers.get('x-restli-id') ?? (res.body as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string' || !POST_URN_RE.test(id)) throw invalidResponse(op, res.status, 'no post URN in x-restli-id');
    return { postUrn: id, created: res.status === 201 };
  }

  async initializeImageUpload(accessToken: string, owner: Author): Promise<{ imageUrn: string; uploadUrl: string }> {
    const op = 'initializeImageUpload';
    checkToken(op, accessToken);
    checkAuthor(op, owner);
    const res = await this.request({
      operation: op,
      method: 'POST',
      path: 'rest/images',
      query: { action: 'initializeUpload' },
      accessToken,
      versioned: true,
      json: { initializeUploadRequest: { owner: authorUrn(owner) } },
    });
    const v = (res.body as { value?: { uploadUrl?: unknown; image?: unknown } } | undefined)?.value;
    if (typeof v?.image !== 'string' || !IMAGE_URN_RE.test(v.image)) throw invalidResponse(op, res.status, 'no image URN');
    let uploadUrl: URL;
    try {
      uploadUrl = new URL(String(v.uploadUrl));
    } catch {
      throw invalidResponse(op, res.status, 'no upload URL');
    }
    if (uploadUrl.protocol !== 'https:' && uploadUrl.protocol !== 'http:')
      throw invalidResponse(op, res.status, 'upload URL is not http(s)');
    return { imageUrn: v.image, uploadUrl: uploadUrl.toString() };
  }

  async uploadImage(accessToken: string, uploadUrl: string, bytes: Buffer, contentType: string): Promise<void> {
    const op = 'uploadImage';
    checkToken(op, accessToken);
    if (bytes.length === 0) throw localError(op, 'the image is empty');
    await this.request({ operation: op, method: 'PUT', path: '', url: uploadUrl, accessToken, raw: { bytes, contentType } });
  }

  async findPostByReference(accessToken: string, author: Author, reference: string): Promise<{ postUrn: string } | null> {
    const op = 'findPostByReference';
    checkToken(op, accessToken);
    checkAuthor(op, author);
    checkReference(op, reference);
    const res = await this.request({
      operation: op,
      method: 'GET',
      path: 'rest/posts',
      query: { q: 'reference', author: authorUrn(author), reference },
      accessToken,
      versioned: true,
    });
    const elements = (res.body as { elements?: unknown } | undefined)?.elements;
    if (!Array.isArray(elements)) throw invalidResponse(op, res.status, 'no elements array');
    if (elements.length === 0) return null;
    const id = (elements[0] as { id?: unknown }).id;
    if (typeof id !== 'string' || !POST_URN_RE.test(id)) throw invalidResponse(op, res.status, 'element without a post URN');
    return { postUrn: id };
  }

  async refreshAccessToken(
    refreshToken: string,
  ): Promise<{ accessToken: string; expiresAt: Date; refreshToken: string | null; refreshTokenExpiresAt: Date | null }> {
    const op = 'refreshAccessToken';
    checkToken(op, refreshToken);
    // Lifetimes count from before the request, so the stored expiry is never later than the real one.
    const startedAt = Date.now();
    const res = await this.request({
      operation: op,
      method: 'POST',
      path: 'oauth/v2/accessToken',
      form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: this.clientId, client_secret: this.clientSecret },
    });
    const b = res.body as Record<string, unknown> | undefined;
    if (typeof b?.access_token !== 'string' || b.access_token === '' || typeof b.expires_in !== 'number' || !(b.expires_in >= 0)) {
      throw invalidResponse(op, res.status, 'no access_token / expires_in');
    }
    // The network may not return a refresh token on every refresh; null tells the caller to
    // keep the one it has.
    const newRefresh = typeof b.refresh_token === 'string' && b.refresh_token !== '' ? b.refresh_token : null;
    const refreshTtl =
      typeof b.refresh_token_expires_in === 'number' && b.refresh_token_expires_in >= 0 ? b.refresh_token_expires_in : null;
    return {
      accessToken: b.access_token,
      expiresAt: new Date(startedAt + b.expires_in * 1000),
      refreshToken: newRefresh,
      refreshTokenExpiresAt: newRefresh !== null && refreshTtl !== null ? new Date(startedAt + refreshTtl * 1000) : null,
    };
  }

  async getIdentity(
    accessToken: string,
  ): Promise<{ personId: string; name: string; vanityName: string | null; pictureUrl: string | null }> {
    const op = 'getIdentity';
    checkToken(op, accessToken);
    const res = await this.request({ operation: op, method: 'GET', path: 'v2/userinfo', accessToken });
    const b = res.body as Record<string, unknown> | undefined;
    if (typeof b?.sub !== 'string' || !ID_RE.test(b.sub)) throw invalidResponse(op, res.status, 'no sub');
    const name =
      typeof b.name === 'string' && b.name !== ''
        ? b.name
        : [b.given_name, b.family_name].filter((x): x is string => typeof x === 'string' && x !== '').join(' ');
    return {
      personId: b.sub,
      name,
      vanityName: typeof b.preferred_username === 'string' && b.preferred_username !== '' ? b.preferred_username : null,
      pictureUrl: typeof b.picture === 'string' && b.picture !== '' ? b.picture : null,
    };
  }

  async listOrganizationAdmins(accessToken: string, organizationId: string): Promise<string[]> {
    const op = 'listOrganizationAdmins';
    checkToken(op, accessToken);
    if (!ID_RE.test(organizationId)) throw localError(op, 'organizationId is not a valid network id');
    const admins: string[] = [];
    const seen = new Set<string>();
    let start = 0;
    for (let page = 0; page < ACL_MAX_PAGES; page++) {
      const res = await this.request({
        operation: op,
        method: 'GET',
        path: 'rest/organizationAcls',
        query: {
          q: 'organization',
          organization: `urn:li:organization:${organizationId}`,
          role: 'ADMINISTRATOR',
          state: 'APPROVED',
          start: String(start),
          count: String(ACL_PAGE_SIZE),
        },
        accessToken,
        versioned: true,
      });
      const b = res.body as { elements?: unknown; paging?: { total?: unknown } } | undefined;
      if (!Array.isArray(b?.elements)) throw invalidResponse(op, res.status, 'no elements array');
      for (const el of b.elements as Array<Record<string, unknown>>) {
        if (el?.role !== undefined && el.role !== 'ADMINISTRATOR') continue;
        if (el?.state !== undefined && el.state !== 'APPROVED') continue;
        const m = typeof el?.roleAssignee === 'string' ? /^urn:li:person:([A-Za-z0-9_-]{1,100})$/.exec(el.roleAssignee) : null;
        if (m && !seen.has(m[1]!)) {
          seen.add(m[1]!);
          admins.push(m[1]!);
        }
      }
      start += b.elements.length;
      const total = typeof b.paging?.total === 'number' ? b.paging.total : null;
      if (b.elements.length === 0 || (total !== null ? start >= total : b.elements.length < ACL_PAGE_SIZE)) return admins;
    }
    throw invalidResponse(op, 200, `admin list did not end within ${ACL_MAX_PAGES} pages`);
  }

  // ----- planning: viral post search -----
  async searchViralPosts(accessToken: string, query: ViralSearchQuery): Promise<ViralSearchResult> {
    const op = 'searchViralPosts';
    checkToken(op, accessToken);
    if (typeof query.keywords !== 'string' || query.keywords.trim() === '' || query.keywords.length > 200)
      throw localError(op, 'keywords must be 1 to 200 characters');
    const params: Record<string, string> = {
      q: 'search',
      keywords: query.keywords.trim(),
      start: String(query.start ?? 0),
      count: String(query.count ?? 20),
    };
    if (query.publishedAfter) params.publishedAfter = String(query.publishedAfter.getTime());
    if (query.publishedBefore) params.publishedBefore = String(query.publishedBefore.getTime());
    if (query.minEngagement !== undefined) params.minEngagement = String(query.minEngagement);
    const res = await this.request({ operation: op, method: 'GET', path: 'rest/viralPosts', query: params, accessToken, versioned: true });
    type Wire = { elements?: unknown; paging?: { total?: unknown } };
    const b = res.body as Wire | undefined;
    if (typeof b !== 'object' || b === null || !Array.isArray(b.elements)) throw invalidResponse(op, res.status, 'no elements array');
    const posts: ViralPost[] = [];
    for (const raw of b.elements as Array<Record<string, any>>) {
      if (typeof raw?.id !== 'string' || !POST_URN_RE.test(raw.id)) throw invalidResponse(op, res.status, 'element without a post URN');
      const m = (raw.metrics ?? {}) as Record<string, unknown>;
      const likes = nonNegativeInt(m.likes);
      const comments = nonNegativeInt(m.comments);
      const reshares = nonNegativeInt(m.reshares);
      posts.push({
        postUrn: raw.id,
        authorName: typeof raw.author?.name === 'string' ? raw.author.name : '',
        authorVanityName: typeof raw.author?.vanityName === 'string' ? raw.author.vanityName : null,
        text: typeof raw.commentary === 'string' ? raw.commentary : '',
        publishedAt: new Date(nonNegativeInt(raw.publishedAt)),
        impressions: nonNegativeInt(m.impressions),
        likes,
        comments,
        reshares,
        engagement: likes + comments + reshares,
      });
    }
    return { posts, total: nonNegativeInt(b.paging?.total) };
  }

  async getPostMetrics(
    accessToken: string,
    postUrn: string,
  ): Promise<{ impressions: number; likes: number; comments: number; reshares: number }> {
    const op = 'getPostMetrics';
    checkToken(op, accessToken);
    if (!POST_URN_RE.test(postUrn)) throw localError(op, `"${postUrn}" is not a post URN`);
    const res = await this.request({
      operation: op,
      method: 'GET',
      path: `rest/socialMetadata/${encodeURIComponent(postUrn)}`,
      accessToken,
      versioned: true,
    });
    type SocialMetadata = {
      reactionSummaries?: Record<string, { count?: unknown } | null> | null;
      commentSummary?: { count?: unknown } | null;
      shareStatistics?: { impressionCount?: unknown; shareCount?: unknown } | null;
    };
    const b = res.body as SocialMetadata | undefined;
    if (typeof b !== 'object' || b === null) throw invalidResponse(op, res.status, 'no body');
    // "Likes" is every reaction type together, as the network's own post counter shows it.
    let likes = 0;
    if (typeof b.reactionSummaries === 'object' && b.reactionSummaries !== null) {
      for (const r of Object.values(b.reactionSummaries)) likes += nonNegativeInt(r?.count);
    }
    return {
      impressions: nonNegativeInt(b.shareStatistics?.impressionCount),
      likes,
      comments: nonNegativeInt(b.commentSummary?.count),
      reshares: nonNegativeInt(b.shareStatistics?.shareCount),
    };
  }

  /** One HTTP exchange; non-2xx answers and transport failures become NetworkError. */
  private async request(spec: RequestSpec): Promise<WireResponse> {
    const headers: Record<string, string> = { ...spec.headers };
    if (spec.accessToken !== undefined) headers.authorization = `Bearer ${spec.accessToken}`;
    if (spec.versioned) {
      headers['linkedin-version'] = this.apiVersion;
      headers['x-restli-protocol-version'] = RESTLI_PROTOCOL_VERSION;
    }
    let body: string | Buffer | undefined;
    if (spec.raw !== undefined) {
      headers['content-type'] = spec.raw.contentType;
      body = spec.raw.bytes;
    } else if (spec.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(spec.form).toString();
    }
    const op = spec.operation;
    const {
      status,
      headers: resHeaders,
      text,
    } = await this.transport.send(
      { method: spec.method, path: spec.path, url: spec.url, query: spec.query, headers, json: spec.json, body },
      networkErrors(op),
    );
    const parsed = parseJson(text);
    if (text !== '' && parsed === undefined) throw invalidResponse(op, status, 'body is not JSON');
    return { status, headers: resHeaders, body: parsed };
  }

  // ----- engagement after publish (docs/engagement.md) -----

  /** A like (reaction LIKE) by `actor` on `postUrn`; the network keeps one reaction per actor and post. */
  async likePost(input: EngagementInput): Promise<{ created: boolean }> {
    const op = 'likePost';
    checkToken(op, input.accessToken);
    checkAuthor(op, input.actor);
    checkReference(op, input.reference);
    if (!POST_URN_RE.test(input.postUrn)) throw localError(op, 'postUrn is not a post URN');
    const res = await this.request({
      operation: op,
      method: 'POST',
      path: 'rest/reactions',
      query: { actor: authorUrn(input.actor) },
      accessToken: input.accessToken,
      versioned: true,
      headers: { [POST_REFERENCE_HEADER]: input.reference },
      json: { root: input.postUrn, reactionType: 'LIKE' },
    });
    if (res.status !== 201 && res.status !== 200) throw invalidResponse(op, res.status, `status ${res.status}`);
    return { created: res.status === 201 };
  }

  /** A comment by `actor` on `postUrn`; a retry under the same reference returns the first comment. */
  async commentOnPost(input: EngagementInput & { text: string }): Promise<{ commentUrn: string; created: boolean }> {
    const op = 'commentOnPost';
    checkToken(op, input.accessToken);
    checkAuthor(op, input.actor);
    checkReference(op, input.reference);
    if (!POST_URN_RE.test(input.postUrn)) throw localError(op, 'postUrn is not a post URN');
    if (typeof input.text !== 'string' || input.text.trim() === '') throw localError(op, 'text is empty');
    const res = await this.request({
      operation: op,
      method: 'POST',
      path: 'rest/comments',
      accessToken: input.accessToken,
      versioned: true,
      headers: { [POST_REFERENCE_HEADER]: input.reference },
      json: { actor: authorUrn(input.actor), object: input.postUrn, message: { text: input.text } },
    });
    if (res.status !== 201 && res.status !== 200) throw invalidResponse(op, res.status, `status ${res.status}`);
    const id = res.headers.get('x-restli-id');
    if (typeof id !== 'string' || !id.startsWith('urn:li:comment:')) throw invalidResponse(op, res.status, 'no comment URN in x-restli-id');
    return { commentUrn: id, created: res.status === 201 };
  }
}

/** The client for config.network: the network at NETWORK_API_URL, else the local simulator (lib/config.ts serviceAddresses). */
export function createNetworkClient(): NetworkClient {
  const n = config.network;
  return new HttpNetworkClient({
    baseUrl: serviceAddresses().network.address,
    apiVersion: n.apiVersion,
    clientId: n.clientId,
    clientSecret: n.clientSecret,
    timeoutMs: n.timeoutMs,
  });
}
