import { ERROR_STATUS, type ErrorCode } from '../../lib/errors';
import type { AnyOperation } from '../operation';

// spec 7.2: every code the REST door answers, its HTTP status (ERROR_STATUS, the table ApiError
// answers with) and when. The OpenAPI document lists, per operation, the codes it can answer (derived below from what the pipeline does
// for its kind, input and scopes, plus the operation's own `errors`); /docs/errors renders this
// table with one anchor per code, which is where every error's docs_url points (spec 7.1).

export interface ErrorEntry {
  code: ErrorCode;
  status: number;
  when: string;
}

// One line per code, in the order of the answers' documentation: code, when.
const TABLE = `
invalid_request          A malformed query, header or body: a bad \`status\` filter, a missing \`projectId\`, an invalid Idempotency-Key, a body that is not JSON.
bad_cursor               The cursor is unusable, most likely because the filters changed since it was issued. Restart the listing without a cursor.
bad_pagination           \`limit\` is not an integer or is below 1.
version_unsupported      The Service-Api-Version header names a version this service does not support; \`details.supported\` lists the ones it does.
unauthenticated          No bearer credential was sent.
invalid_token            The bearer credential is malformed, unknown or expired.
key_revoked              The API key has been revoked.
key_expired              The API key has expired.
spend_cap_exceeded       The daily API AI-spend cap is reached; \`details\` carries the cap.
usage_limit_exceeded     The weekly AI budget refused the job (enforcement \`block\` at 100 %).
scope_missing            The credential lacks a required scope; \`details.required_scope\` names it when exactly one named scope is missing.
plan_not_eligible        The workspace plan does not include API access.
forbidden_project        The project is not reachable; client-role refusals add \`details.reason: client_role\`.
workspace_unavailable    Service-Workspace-Id names a workspace the caller cannot reach (also for an API key of another workspace).
not_found                The resource is absent or belongs to another workspace.
method_not_allowed       The path exists but not with this method; see the Allow header.
conflict                 Scheduling was refused because the network connection is unusable; \`details.reason\`, \`details.reconnectUrl\`, \`details.retryable\`.
idempotency_key_conflict The Idempotency-Key was already used with a different request body.
payload_too_large        A text is over its limit (\`content\` 100,000 characters, \`title\` 500, \`source.text\` 100,000) or the body is too large.
unsupported_media_type   The body is not in a media type this endpoint accepts.
unprocessable            The body has a bad shape or enum value, a past \`scheduledFor\`, a note of another project, an upload handle without its object.
rate_limited             The workspace sliding-window limit is reached; wait Retry-After seconds (headers of spec 8).
endpoint_disabled        Registered but never emitted.
internal_error           Something went wrong on the service side; quote \`request_id\` to support.
temporarily_unavailable  A dependency (the network, the job queue) did not answer; retry after Retry-After seconds.
`;

export const ERROR_CATALOGUE: readonly ErrorEntry[] = TABLE.trim()
  .split('\n')
  .map((line) => {
    const [, code, when] = /^([a-z_]+) +(\S.*)$/.exec(line) ?? [];
    if (!code || !when || !(code in ERROR_STATUS)) throw new Error(`api/openapi/errors.ts: malformed catalogue line: ${line}`);
    return { code: code as ErrorCode, status: ERROR_STATUS[code as ErrorCode], when };
  });

/** Codes grouped by their HTTP status, in status order: one documented answer per status. */
export function byStatus(codes: readonly ErrorCode[]): [number, ErrorCode[]][] {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of codes) groups.set(ERROR_STATUS[code], [...(groups.get(ERROR_STATUS[code]) ?? []), code]);
  return [...groups].sort((a, b) => a[0] - b[0]);
}

/** The codes an operation can answer through the REST door (spec 7.2), in catalogue order. */
export function operationErrorCodes(op: AnyOperation, opts: { hasPathParams: boolean; cursor: boolean; limit: boolean }): ErrorCode[] {
  // invalid_request on every route, public ones included: a request the HTTP parser refuses (a
  // head over 16 KB, malformed HTTP) is answered with it before any route is known (api/listen.ts).
  const codes = new Set<ErrorCode>(['internal_error', 'version_unsupported', 'invalid_request']);
  if (!op.public) {
    for (const c of [
      'unauthenticated',
      'invalid_token',
      'key_revoked',
      'key_expired',
      'plan_not_eligible',
      'workspace_unavailable',
      'rate_limited',
    ] as const)
      codes.add(c);
    if (op.scopes !== 'any') codes.add('scope_missing');
    if (op.clientRole === 'deny') codes.add('forbidden_project');
    if (op.inputSource !== 'query') for (const c of ['unprocessable', 'payload_too_large'] as const) codes.add(c);
    if (opts.cursor) codes.add('bad_cursor');
    if (opts.limit) codes.add('bad_pagination');
    if (opts.hasPathParams) codes.add('not_found');
    // spec 8: a key reused with another body, or (409 conflict, retryable) still held by a twin
    // that has not answered within the wait (api/idempotency.ts).
    if (op.kind === 'write') for (const c of ['idempotency_key_conflict', 'conflict'] as const) codes.add(c);
  }
  for (const c of op.errors ?? []) codes.add(c);
  return ERROR_CATALOGUE.map((e) => e.code).filter((c) => codes.has(c));
}

/**
 * The 400 a path answers when the listener refuses the request before any route is known (a head
 * over 16 KB, malformed HTTP; api/listen.ts): the 7.1 envelope with `invalid_request`. For the
 * paths written by hand (the operations of the route table get it from operationErrorCodes);
 * `envelope` names the error schema of the path's family (`Error`, or `OAuthError` on the
 * authorization server, which carries the same fields).
 */
export function parserRefusalResponse(envelope: 'Error' | 'OAuthError'): Record<string, unknown> {
  return {
    description: 'invalid_request: the request was refused before routing (a head over 16 KB, malformed HTTP).',
    headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    content: { 'application/json': { schema: parserRefusalSchema(envelope) } },
    'x-error-codes': ['invalid_request'],
  };
}

export function parserRefusalSchema(envelope: 'Error' | 'OAuthError'): Record<string, unknown> {
  return {
    allOf: [
      { $ref: `#/components/schemas/${envelope}` },
      { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: ['invalid_request'] } } } } },
    ],
  };
}
