import type { ErrorCode } from '../../lib/errors';
import type { AnyOperation } from '../operation';

// spec 7.2: every code the REST door answers, its HTTP status and when. The OpenAPI document
// lists, per operation, the codes it can answer (derived below from what the pipeline does
// for its kind, input and scopes, plus the operation's own `errors`); /docs/errors renders this
// table with one anchor per code, which is where every error's docs_url points (spec 7.1).

export interface ErrorEntry {
  code: ErrorCode;
  status: number;
  when: string;
}

export const ERROR_CATALOGUE: readonly ErrorEntry[] = [
  {
    code: 'invalid_request',
    status: 400,
    when: 'A malformed query, header or body: a bad `status` filter, a missing `projectId`, an invalid Idempotency-Key, a body that is not JSON.',
  },
  {
    code: 'bad_cursor',
    status: 400,
    when: 'The cursor is unusable, most likely because the filters changed since it was issued. Restart the listing without a cursor.',
  },
  { code: 'bad_pagination', status: 400, when: '`limit` is not an integer or is below 1.' },
  {
    code: 'version_unsupported',
    status: 400,
    when: 'The Service-Api-Version header names a version this service does not support; `details.supported` lists the ones it does.',
  },
  { code: 'unauthenticated', status: 401, when: 'No bearer credential was sent.' },
  { code: 'invalid_token', status: 401, when: 'The bearer credential is malformed, unknown or expired.' },
  { code: 'key_revoked', status: 401, when: 'The API key has been revoked.' },
  { code: 'key_expired', status: 401, when: 'The API key has expired.' },
  { code: 'spend_cap_exceeded', status: 402, when: 'The daily API AI-spend cap is reached; `details` carries the cap.' },
  { code: 'usage_limit_exceeded', status: 402, when: 'The weekly AI budget refused the job (enforcement `block` at 100 %).' },
  {
    code: 'scope_missing',
    status: 403,
    when: 'The credential lacks a required scope; `details.required_scope` names it when exactly one named scope is missing.',
  },
  { code: 'plan_not_eligible', status: 403, when: 'The workspace plan does not include API access.' },
  { code: 'forbidden_project', status: 403, when: 'The project is not reachable; client-role refusals add `details.reason: client_role`.' },
  {
    code: 'workspace_unavailable',
    status: 403,
    when: 'Service-Workspace-Id names a workspace the caller cannot reach (also for an API key of another workspace).',
  },
  { code: 'not_found', status: 404, when: 'The resource is absent or belongs to another workspace.' },
  { code: 'method_not_allowed', status: 405, when: 'The path exists but not with this method; see the Allow header.' },
  {
    code: 'conflict',
    status: 409,
    when: 'Scheduling was refused because the network connection is unusable; `details.reason`, `details.reconnectUrl`, `details.retryable`.',
  },
  { code: 'idempotency_key_conflict', status: 409, when: 'The Idempotency-Key was already used with a different request body.' },
  {
    code: 'payload_too_large',
    status: 413,
    when: 'A text is over its limit (`content` 100,000 characters, `title` 500, `source.text` 100,000) or the body is too large.',
  },
  { code: 'unsupported_media_type', status: 415, when: 'The body is not in a media type this endpoint accepts.' },
  {
    code: 'unprocessable',
    status: 422,
    when: 'The body has a bad shape or enum value, a past `scheduledFor`, a note of another project, an upload handle without its object.',
  },
  {
    code: 'rate_limited',
    status: 429,
    when: 'The workspace sliding-window limit is reached; wait Retry-After seconds (headers of spec 8).',
  },
  { code: 'endpoint_disabled', status: 409, when: 'Registered but never emitted.' },
  { code: 'internal_error', status: 500, when: 'Something went wrong on the service side; quote `request_id` to support.' },
  {
    code: 'temporarily_unavailable',
    status: 503,
    when: 'A dependency (the network, the job queue) did not answer; retry after Retry-After seconds.',
  },
];

const STATUS_OF = new Map(ERROR_CATALOGUE.map((e) => [e.code, e.status]));

export function statusOfCode(code: ErrorCode): number {
  return STATUS_OF.get(code) ?? 500;
}

/** The codes an operation can answer through the REST door (spec 7.2), in catalogue order. */
export function operationErrorCodes(op: AnyOperation, opts: { hasPathParams: boolean; cursor: boolean; limit: boolean }): ErrorCode[] {
  const codes = new Set<ErrorCode>(['internal_error', 'version_unsupported']);
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
    if (op.inputSource === 'query') codes.add('invalid_request');
    else for (const c of ['invalid_request', 'unprocessable', 'payload_too_large'] as const) codes.add(c);
    if (opts.cursor) codes.add('bad_cursor');
    if (opts.limit) codes.add('bad_pagination');
    if (opts.hasPathParams) codes.add('not_found');
    if (op.kind === 'write') {
      codes.add('invalid_request');
      codes.add('idempotency_key_conflict');
    }
  }
  for (const c of op.errors ?? []) codes.add(c);
  return ERROR_CATALOGUE.map((e) => e.code).filter((c) => codes.has(c));
}
