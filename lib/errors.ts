import { config } from './config';

// spec 7: every REST error is { error: { code, message, request_id, docs_url, details? } }.
// Domain code throws one of these; each door (REST envelope, OAuth redirect, MCP isError)
// turns it into its own wire form in one place.

// spec 7.2 / 7.3: the HTTP status of every code, written once. ApiError takes its status from
// here; the error catalogue of the OpenAPI document and /docs/errors (api/openapi/errors.ts)
// documents the same table. spec 7.2 leaves workspace_unavailable and usage_limit_exceeded
// without a status: they answer 403 and 402 like their neighbours forbidden_project and
// spend_cap_exceeded.
export const ERROR_STATUS = {
  invalid_request: 400,
  bad_cursor: 400,
  bad_pagination: 400,
  version_unsupported: 400,
  unauthenticated: 401,
  invalid_token: 401,
  key_revoked: 401,
  key_expired: 401,
  spend_cap_exceeded: 402,
  usage_limit_exceeded: 402,
  scope_missing: 403,
  plan_not_eligible: 403,
  forbidden_project: 403,
  workspace_unavailable: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_key_conflict: 409,
  endpoint_disabled: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal_error: 500,
  temporarily_unavailable: 503,
  // RFC 6749 / 7591 / 7009 names used by the OAuth endpoints (spec 7.3)
  invalid_client: 401,
  invalid_client_metadata: 400,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  // RFC 8707 2: a resource indicator that is malformed, unknown or not granted
  invalid_target: 400,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;
  /** Extra response headers this error needs (WWW-Authenticate, Retry-After, Allow). */
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get docsUrl(): string {
    return `${config.docsUrl}#${this.code}`;
  }
}

export const errors = {
  invalidRequest: (message: string, details?: Record<string, unknown>) => new ApiError('invalid_request', message, details),
  badCursor: (message = 'The cursor is not usable with these filters; restart the listing without a cursor.') =>
    new ApiError('bad_cursor', message),
  badPagination: (message = '`limit` must be an integer of at least 1.') => new ApiError('bad_pagination', message),
  versionUnsupported: (version: string) =>
    new ApiError(
      'version_unsupported',
      `Service-Api-Version "${version}" is not supported. Supported versions: ${config.apiVersions.supported.join(', ')}.`,
      { supported: [...config.apiVersions.supported] },
    ),
  unauthenticated: (message = 'Send a bearer credential: Authorization: Bearer <token>.') => new ApiError('unauthenticated', message),
  invalidToken: (message = 'The bearer credential is malformed, unknown or expired.') => new ApiError('invalid_token', message),
  keyRevoked: () => new ApiError('key_revoked', 'This API key has been revoked.'),
  keyExpired: () => new ApiError('key_expired', 'This API key has expired.'),
  scopeMissing: (requiredScope?: string, message?: string) =>
    new ApiError(
      'scope_missing',
      message ??
        (requiredScope ? `This operation needs the \`${requiredScope}\` scope.` : 'The credential lacks the scopes this operation needs.'),
      requiredScope ? { required_scope: requiredScope } : undefined,
    ),
  planNotEligible: (plan: string) => new ApiError('plan_not_eligible', `The ${plan} plan does not include API access.`),
  forbiddenProject: (message: string, details?: Record<string, unknown>) => new ApiError('forbidden_project', message, details),
  notFound: (what = 'resource') => new ApiError('not_found', `No such ${what}.`),
  conflict: (message: string, details?: Record<string, unknown>) => new ApiError('conflict', message, details),
  idempotencyKeyConflict: (message = 'This Idempotency-Key was used with a different request body.') =>
    new ApiError('idempotency_key_conflict', message),
  payloadTooLarge: (message: string, details?: Record<string, unknown>) => new ApiError('payload_too_large', message, details),
  unprocessable: (message: string, details?: Record<string, unknown>) => new ApiError('unprocessable', message, details),
  /**
   * spec 8: the one 429 of every door and limiter. `details.retryAfterSeconds` repeats the
   * Retry-After header for clients (MCP tool results) that see no headers.
   */
  rateLimited: (rl: { limit: number; remaining?: number; resetAt: number; retryAfter: number }, message?: string) =>
    new ApiError(
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
    new ApiError('workspace_unavailable', 'The workspace named by Service-Workspace-Id is not reachable with this credential.'),
  internal: () => new ApiError('internal_error', 'Something went wrong on our side. Quote the request id when you contact support.'),
};
