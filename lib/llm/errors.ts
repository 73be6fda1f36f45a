import { OutboundError, parseJson, parseRetryAfter, type OutboundFailure } from '../outbound/outbound';

// Failures of the LLM provider, reduced to a handful of stable codes. Job rows expose
// `errorCode` to API clients and the generation activity decides retries from `retryable`,
// so both must depend on what the provider *said* (HTTP status, `error.code`, `error.type`)
// and never on its prose, which differs between providers and changes without notice.

// Each code's kind of failure and whether another attempt can help.
const CODES = {
  llm_rate_limited: { failure: 'rate_limited', retryable: true },
  llm_unavailable: { failure: 'unavailable', retryable: true },
  llm_timeout: { failure: 'timeout', retryable: true },
  llm_auth_failed: { failure: 'refused', retryable: false },
  llm_bad_request: { failure: 'refused', retryable: false },
  llm_empty_output: { failure: 'bad_response', retryable: false },
  llm_invalid_response: { failure: 'bad_response', retryable: true },
} as const satisfies Record<string, { failure: OutboundFailure; retryable: boolean }>;

export type LlmErrorCode = keyof typeof CODES;

// A garbled answer is usually a proxy hiccup and worth one more try; a second garbled answer
// in a row points at a misconfigured endpoint, and further attempts would only burn budget.
const MAX_RETRIES: Partial<Record<LlmErrorCode, number>> = { llm_invalid_response: 1 };

export interface LlmErrorOptions {
  /** Overrides the code's usual kind of failure (a connection refused is `unreachable`). */
  failure?: OutboundFailure;
  /** HTTP status of the provider's answer; null when no answer arrived. */
  status?: number | null;
  /** Overrides the code's usual retryability (e.g. a 429 that is really an exhausted quota). */
  retryable?: boolean;
  providerCode?: string | null;
  retryAfterMs?: number | null;
  costCents?: number;
  cause?: unknown;
}

export class LlmError extends OutboundError {
  readonly service = 'llm';
  declare readonly code: LlmErrorCode;
  /** The provider's own `error.code` or `error.type`, kept for logs and support only. */
  readonly providerCode: string | null;
  /** Retries allowed for this kind of failure; null leaves the count to the caller's policy. */
  readonly maxRetries: number | null;
  /**
   * What the failed call cost, when the provider billed it anyway (a filtered or empty answer
   * still consumed the prompt); spend reconciliation needs it even though no post came out.
   */
  readonly costCents: number;

  constructor(code: LlmErrorCode, message: string, opts: LlmErrorOptions = {}) {
    super(code, message, { failure: CODES[code].failure, ...opts, retryable: opts.retryable ?? CODES[code].retryable });
    this.providerCode = opts.providerCode ?? null;
    this.maxRetries = this.retryable ? (MAX_RETRIES[code] ?? null) : 0;
    this.costCents = opts.costCents ?? 0;
  }

  /** The same error, recording what the call cost. */
  withCost(costCents: number): LlmError {
    return new LlmError(this.code, this.message, {
      failure: this.failure,
      status: this.status,
      retryable: this.retryable,
      providerCode: this.providerCode,
      retryAfterMs: this.retryAfterMs,
      costCents,
      cause: this.cause,
    });
  }
}

export function isLlmError(err: unknown): err is LlmError {
  return err instanceof LlmError;
}

/**
 * Whether a failed attempt should be tried again. `attempt` is the 1-based number of the attempt
 * that just failed (Temporal's `Context.current().info.attempt`). Anything that is not an
 * LlmError is left to the caller's retry policy.
 */
export function shouldRetry(err: unknown, attempt: number): boolean {
  if (!isLlmError(err)) return true;
  if (!err.retryable) return false;
  return err.maxRetries === null || attempt <= err.maxRetries;
}

export interface ProviderError {
  message: string | null;
  type: string | null;
  code: string | null;
  /** Some gateways put the upstream HTTP status in `error.code`. */
  numericCode: number | null;
}

/** Reads the OpenAI-style `{ error: { message, type, code } }` body, tolerating common variants. */
export function readProviderError(body: unknown): ProviderError | null {
  if (!isRecord(body) || !('error' in body)) return null;
  const e = body.error;
  if (typeof e === 'string') return { message: e, type: null, code: null, numericCode: null };
  if (!isRecord(e)) return null;
  const code = e.code;
  return {
    message: typeof e.message === 'string' ? e.message : null,
    type: typeof e.type === 'string' ? e.type : null,
    code: typeof code === 'string' ? code : null,
    numericCode: typeof code === 'number' && Number.isInteger(code) ? code : null,
  };
}

const CONTENT_FILTERED = new Set(['content_filter', 'content_filtered', 'content_policy_violation', 'responsible_ai_policy_violation']);
const QUOTA_EXHAUSTED = new Set(['insufficient_quota', 'billing_hard_limit_reached', 'quota_exceeded']);
const RATE_LIMITED = new Set(['rate_limit_exceeded', 'rate_limit_error', 'too_many_requests', 'requests', 'tokens']);
const AUTH_FAILED = new Set([
  'invalid_api_key',
  'authentication_error',
  'invalid_authentication',
  'permission_error',
  'permission_denied',
  'unauthorized',
]);
const TIMED_OUT = new Set(['timeout', 'request_timeout']);
const UNAVAILABLE = new Set(['server_error', 'api_error', 'overloaded_error', 'engine_overloaded', 'service_unavailable']);

/**
 * Classifies a provider failure. `status` is the HTTP status (null when the error object came
 * inside a 2xx body, as some gateways do); `body` is the parsed JSON body, or undefined when it
 * was not JSON.
 */
export function classifyProviderFailure(status: number | null, body: unknown, retryAfterMs: number | null = null): LlmError {
  const p = readProviderError(body);
  const effectiveStatus = status !== null && status >= 400 ? status : (p?.numericCode ?? status);
  const tags = [p?.code, p?.type].filter((t): t is string => !!t).map((t) => t.toLowerCase());
  const has = (set: Set<string>) => tags.some((t) => set.has(t));
  const providerCode = p?.code ?? p?.type ?? null;
  const detail = describe(effectiveStatus, providerCode, p?.message ?? null);
  const opts = { status, providerCode, retryAfterMs };

  // A filtered prompt comes back as a 400 on some platforms; retrying the same text is pointless.
  if (has(CONTENT_FILTERED)) return new LlmError('llm_empty_output', `LLM refused the content: ${detail}`, opts);
  if (effectiveStatus === 401 || effectiveStatus === 403 || has(AUTH_FAILED)) {
    return new LlmError('llm_auth_failed', `LLM rejected the credentials: ${detail}`, opts);
  }
  // OpenAI reports an exhausted balance as a 429 too, but no amount of waiting within a job's
  // lifetime brings the money back.
  if (has(QUOTA_EXHAUSTED)) {
    return new LlmError('llm_rate_limited', `LLM quota exhausted: ${detail}`, { ...opts, retryable: false });
  }
  if (effectiveStatus === 429 || has(RATE_LIMITED)) return new LlmError('llm_rate_limited', `LLM rate limit: ${detail}`, opts);
  if (effectiveStatus === 408 || has(TIMED_OUT)) return new LlmError('llm_timeout', `LLM timed out: ${detail}`, opts);
  // 409 is what OpenAI answers on an internal lock timeout; its own SDK retries it.
  if ((effectiveStatus !== null && effectiveStatus >= 500) || effectiveStatus === 409 || has(UNAVAILABLE)) {
    return new LlmError('llm_unavailable', `LLM unavailable: ${detail}`, opts);
  }
  if (effectiveStatus !== null && effectiveStatus >= 400) {
    return new LlmError('llm_bad_request', `LLM rejected the request: ${detail}`, opts);
  }
  return new LlmError('llm_invalid_response', `LLM answered with an error we cannot interpret: ${detail}`, opts);
}

/** Classifies a non-2xx HTTP answer from its raw body text and headers. */
export function errorFromHttpResponse(status: number, bodyText: string, headers?: { get(name: string): string | null }): LlmError {
  return classifyProviderFailure(status, parseJson(bodyText), headers ? parseRetryAfter(headers) : null);
}

function describe(status: number | null, providerCode: string | null, message: string | null): string {
  const head = [status === null ? null : `HTTP ${status}`, providerCode].filter(Boolean).join(' ');
  // Provider prose is shown to operators, not branched on; keep it short because it can echo
  // large parts of the request.
  const text = message ? message.replace(/\s+/g, ' ').trim().slice(0, 300) : '';
  return [head || 'unknown error', text].filter(Boolean).join(': ');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
