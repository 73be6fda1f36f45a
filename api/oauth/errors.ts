import { ApiError, type ErrorCode } from '../../lib/errors';

// spec 7.3: the OAuth error names as a small class family. On the JSON endpoints they are
// ApiErrors, so the REST boundary (api/rest/errors.ts) renders them once, in the standard
// envelope with the OAuth name as `code`. On the authorization redirect leg the same objects
// become RFC 6749 4.1.2.1 query parameters (see redirectError in authorize/respond.ts).

export class OAuthError extends ApiError {
  /** The RFC name used on the redirect leg; equal to `code` except where the envelope has no such code. */
  readonly oauthName: string;
  constructor(code: ErrorCode, description: string, oauthName: string = code, headers?: Record<string, string>) {
    super(code, description, undefined, headers);
    this.name = new.target.name;
    this.oauthName = oauthName;
  }
}

/** A 400 whose RFC name is its envelope code; each named error below is its own class. */
function BadRequest(code: ErrorCode) {
  return class extends OAuthError {
    constructor(description: string) {
      super(code, description);
    }
  };
}

export class InvalidRequest extends BadRequest('invalid_request') {}

/** RFC 6749 5.2: unknown client or a client authentication the server does not accept; 401. */
export class InvalidClient extends OAuthError {
  constructor(description = 'The client is unknown or its authentication is not accepted.', headers?: Record<string, string>) {
    super('invalid_client', description, 'invalid_client', headers);
  }
}

export class InvalidClientMetadata extends BadRequest('invalid_client_metadata') {}

/** Code expired or used, refresh token reused or revoked, redirect or PKCE mismatch (spec 7.3). */
export class InvalidGrant extends OAuthError {
  constructor(description = 'The authorization grant is invalid, expired, already used or revoked.') {
    super('invalid_grant', description);
  }
}

export class UnauthorizedClient extends BadRequest('unauthorized_client') {}

export class UnsupportedGrantType extends BadRequest('unsupported_grant_type') {}

/** RFC 6749 4.1.2.1: only ever sent on the redirect leg, so the envelope falls back to invalid_request. */
export class UnsupportedResponseType extends OAuthError {
  constructor(description: string) {
    super('invalid_request', description, 'unsupported_response_type');
  }
}

export class InvalidScope extends BadRequest('invalid_scope') {}

/**
 * RFC 8707 2: "the requested resource is invalid, missing, unknown, or malformed". Used on the
 * redirect leg of /oauth/authorize and, as 400, by the token endpoint (a resource the grant
 * does not cover).
 */
export class InvalidTarget extends BadRequest('invalid_target') {}

export class AccessDenied extends OAuthError {
  constructor(description = 'The user declined the authorization request.') {
    super('access_denied', description);
  }
}

/**
 * The authorization request cannot be trusted to redirect (unknown client, unregistered
 * redirect URI, expired interaction): RFC 6749 4.1.2.1 says inform the user, never redirect.
 * Rendered as an HTML page with status 400.
 */
export class AuthorizationPageError extends Error {
  readonly title: string;
  /** The RFC 6749 error name the page states, when one applies (invalid_client, invalid_request). */
  readonly oauthName: string | null;
  constructor(title: string, description: string, oauthName: string | null = null) {
    super(description);
    this.name = 'AuthorizationPageError';
    this.title = title;
    this.oauthName = oauthName;
  }
}
