import { config } from './config';

// spec 7: every REST error is { error: { code, message, request_id, docs_url, details? } }.
// Domain code throws one of these; each door (REST envelope, OAuth redirect, MCP isError)
// turns it into its own wire form in one place.

export type ErrorCode =
  | 'invalid_request'
  | 'bad_cursor'
  | 'bad_pagination'
  | 'version_unsupported'
  | 'unauthenticated'
  | 'invalid_token'
  | 'key_revoked'
  | 'key_expired'
  | 'spend_cap_exceeded'
  | 'scope_missing'
  | 'plan_not_eligible'
  | 'forbidden_project'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'idempotency_key_conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unprocessable'
  | 'rate_limited'
  | 'workspace_unavailable'
  | 'usage_limit_exceeded'
  | 'endpoint_disabled'
  | 'internal_error'
  | 'temporarily_unavailable'
  // RFC 6749 / 7591 / 7009 names used by the OAuth endpoints (spec 7.3)
  | 'invalid_client'
  | 'invalid_client_metadata'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  // RFC 8707 2: a resource indicator that is malformed, unknown or not granted
  | 'invalid_target';

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;
  /** Extra response headers this error needs (WWW-Authenticate, Retry-After, Allow). */
  readonly headers?: Record<string, string>;

  constructor(status: number, code: ErrorCode, message: string, details?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get docsUrl(): string {
    return `${config.docsUrl}#${this.code}`;
  }
}

export const errors = {
  invalidRequest: (message: string, details?: Record<string, unknown>) => new ApiError(400, 'invalid_request', message, details),
  badCursor: (message = 'The cursor is not usable with these filters; restart the listing without a cursor.') =>
    new ApiError(400, 'bad_cursor', message),
  badPagination: (message = '`limit` must be an integer of at least 1.') => new ApiError(400, 'bad_pagination', message),
  versionUnsupported: (version: string) =>
    new ApiError(
      400,
      'version_unsupported',
      `Service-Api-Version "${version}" is not supported. Supported versions: ${config.apiVersions.supported.join(', ')}.`,
      { supported: [...config.apiVersions.supported] },
    ),
  unauthenticated: (message = 'Send a bearer credential: Authorization: Bearer <token>.') => new ApiError(401, 'unauthenticated', message),
  invalidToken: (message = 'The bearer credential is malformed, unknown or expired.') => new ApiError(401, 'invalid_token', message),
  keyRevoked: () => new ApiError(401, 'key_revoked', 'This API key has been revoked.'),
  keyExpired: () => new ApiError(401, 'key_expired', 'This API key has expired.'),
  scopeMissing: (requiredScope?: string, message?: string) =>
    new ApiError(
      403,
      'scope_missing',
      message ??
        (requiredScope ? `This operation needs the \`${requiredScope}\` scope.` : 'The credential lacks the scopes this operation needs.'),
      requiredScope ? { required_scope: requiredScope } : undefined,
    ),
  planNotEligible: (plan: string) => new ApiError(403, 'plan_not_eligible', `The ${plan} plan does not include API access.`),
  forbiddenProject: (message: string, details?: Record<string, unknown>) => new ApiError(403, 'forbidden_project', message, details),
  notFound: (what = 'resource') => new ApiError(404, 'not_found', `No such ${what}.`),
  conflict: (message: string, details?: Record<string, unknown>) => new ApiError(409, 'conflict', message, details),
  idempotencyKeyConflict: (message = 'This Idempotency-Key was used with a different request body.') =>
    new ApiError(409, 'idempotency_key_conflict', message),
  payloadTooLarge: (message: string, details?: Record<string, unknown>) => new ApiError(413, 'payload_too_large', message, details),
  unprocessable: (message: string, details?: Record<string, unknown>) => new ApiError(422, 'unprocessable', message, details),
  /**
   * spec 8: the one 429 of every door and limiter. `details.retryAfterSeconds` repeats the
   * Retry-After header for clients (MCP tool results) that see no headers.
   */
  rateLimited: (rl: { limit: number; remaining?: number; resetAt: number; retryAfter: number }, message?: string) =>
    new ApiError(
      429,
      'rate_limited',
      message ?? `Rate limit of ${rl.limit} requests per minute reached; retry in ${rl.retryAfter} s.`,
      { retryAfterSeconds: rl.retryAfter },
      {
        'Retry-After': String(rl.retryAfter),
        'X-RateLimit-Limit': String(rl.limit),
        'X-RateLimit-Remaining': String(rl.remaining ?? 0),
        'X-RateLimit-Reset': String(rl.resetAt),
      },
    ),
  workspaceUnavailable: () =>
    new ApiError(403, 'workspace_unavailable', 'The workspace named by Service-Workspace-Id is not reachable with this credential.'),
  internal: () => new ApiError(500, 'internal_error', 'Something went wrong on our side. Quote the request id when you contact support.'),
};
