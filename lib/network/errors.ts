import { OutboundError, statusVerdict, type OutboundFailure } from '../outbound/outbound';

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

// The codes whose failure the status does not tell (none arrived, or a 2xx that made no sense).
const FAILURE: Partial<Record<NetworkErrorCode, OutboundFailure>> = {
  timeout: 'timeout',
  connection_error: 'unreachable',
  invalid_response: 'bad_response',
};

export class NetworkError extends OutboundError {
  readonly service = 'network';
  readonly kind: NetworkErrorKind;
  declare readonly code: NetworkErrorCode;
  /** The code in the server's error body, verbatim (`EXPIRED_ACCESS_TOKEN`, `invalid_grant`, ...). */
  readonly serverCode: string | null;
  readonly operation: NetworkOperation | null;

  constructor(init: NetworkErrorInit) {
    // Retryable exactly for `transient`: auth and permanent failures do not heal by retrying.
    super(init.code, init.message, {
      failure: FAILURE[init.code] ?? (init.status === null ? 'refused' : statusVerdict(init.status).failure),
      retryable: init.kind === 'transient',
      status: init.status,
      retryAfterMs: init.retryAfterMs,
      cause: init.cause,
    });
    this.kind = init.kind;
    this.serverCode = init.serverCode ?? null;
    this.operation = init.operation ?? null;
  }
}

export function isNetworkError(err: unknown): err is NetworkError {
  return err instanceof NetworkError;
}
