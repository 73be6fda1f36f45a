// The one error type every NetworkClient call throws. Callers (publish and connection-health
// activities) branch on `kind` only: a retry policy needs to know whether waiting helps
// (`transient`), whether the user has to reconnect (`auth`, which feeds the connection state
// of spec 2.6 / 3.4), or whether the request itself is wrong (`permanent`).

export type NetworkErrorKind = 'transient' | 'permanent' | 'auth';

export type NetworkOperation =
  | 'createPost'
  | 'findPostByReference'
  | 'refreshAccessToken'
  | 'getIdentity'
  | 'listOrganizationAdmins'
  | 'getPostMetrics'
  | 'searchViralPosts'
  | 'initializeImageUpload'
  | 'uploadImage'
  | 'likePost'
  | 'commentOnPost';

/**
 * Normalised codes. The server's own code (for example `REVOKED_ACCESS_TOKEN`) is kept in
 * `serverCode` for logs; callers should read `code`, which stays the same if the wire
 * vocabulary changes.
 */
export type NetworkErrorCode =
  // auth: the user's authorization is gone; reconnecting is the only fix.
  | 'token_revoked'
  | 'token_expired'
  | 'invalid_token'
  | 'refresh_token_invalid'
  // transient: the same call may succeed later.
  | 'rate_limited'
  | 'unavailable'
  | 'server_error'
  | 'timeout'
  | 'connection_error'
  | 'invalid_response'
  // permanent: the call will fail the same way until something else changes.
  | 'forbidden'
  | 'not_found'
  | 'invalid_request'
  | 'invalid_client'
  | 'conflict'
  | 'unprocessable'
  | 'unexpected_status';

export interface NetworkErrorInit {
  kind: NetworkErrorKind;
  code: NetworkErrorCode;
  status: number | null;
  message: string;
  operation?: NetworkOperation | null;
  serverCode?: string | null;
  retryAfterMs?: number | null;
  cause?: unknown;
}

export class NetworkError extends Error {
  readonly kind: NetworkErrorKind;
  /** HTTP status, or null when no response arrived (timeout, connection error, local validation). */
  readonly status: number | null;
  readonly code: NetworkErrorCode;
  /** True exactly for `transient`; auth and permanent failures do not heal by retrying. */
  readonly retryable: boolean;
  /** The server's Retry-After, in ms, when it sent one; a retry policy should wait at least this long. */
  readonly retryAfterMs: number | null;
  /** The code in the server's error body, verbatim (`EXPIRED_ACCESS_TOKEN`, `invalid_grant`, ...). */
  readonly serverCode: string | null;
  readonly operation: NetworkOperation | null;

  constructor(init: NetworkErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'NetworkError';
    this.kind = init.kind;
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.kind === 'transient';
    this.retryAfterMs = init.retryAfterMs ?? null;
    this.serverCode = init.serverCode ?? null;
    this.operation = init.operation ?? null;
  }
}

export function isNetworkError(err: unknown): err is NetworkError {
  return err instanceof NetworkError;
}
