// Calls to the services this one depends on (ARCHITECTURE.md "The outside world"): the network,
// the LLM, the images and transcription APIs, the transcript service, user-given URLs. Each
// client keeps its own `code` vocabulary (what a job row shows), but every failure is an
// OutboundError, so a caller reads the same fields whatever answered. Clients never retry by
// themselves: retries belong to the Temporal activity that calls them, which reads `retryable`
// and `retryAfterMs`.

export type OutboundService = 'network' | 'llm' | 'images' | 'transcription' | 'youtube' | 'url';

/** What went wrong, across services; `code` says it in the service's own words. */
export type OutboundFailure = 'timeout' | 'unreachable' | 'rate_limited' | 'unavailable' | 'refused' | 'bad_response';

export interface OutboundErrorInit {
  failure: OutboundFailure;
  /** Whether another attempt could answer differently. */
  retryable: boolean;
  /** HTTP status of the answer; null when none arrived (or the call was refused before sending). */
  status?: number | null;
  /** The service's Retry-After, in ms, when it sent one; a retry should wait at least this long. */
  retryAfterMs?: number | null;
  cause?: unknown;
}

export abstract class OutboundError extends Error {
  abstract readonly service: OutboundService;
  readonly failure: OutboundFailure;
  readonly retryable: boolean;
  readonly status: number | null;
  readonly retryAfterMs: number | null;

  constructor(
    readonly code: string,
    message: string,
    init: OutboundErrorInit,
  ) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.failure = init.failure;
    this.retryable = init.retryable;
    this.status = init.status ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }
}

/** What an HTTP status other than 2xx says: the failure, and whether another attempt may pass (408, 429, 5xx). */
export function statusVerdict(status: number): OutboundErrorInit & { status: number } {
  const failure = status === 408 ? 'timeout' : status === 429 ? 'rate_limited' : status >= 500 ? 'unavailable' : 'refused';
  return { failure, retryable: failure !== 'refused', status };
}

/** Retry-After (RFC 9110 10.2.3: delay-seconds or an HTTP-date), or OpenAI's retry-after-ms, in ms; null when absent or unreadable. */
export function parseRetryAfter(headers: { get(name: string): string | null }, now = Date.now()): number | null {
  const ms = headers.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const v = headers.get('retry-after')?.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The parsed JSON of a body, or undefined when it is empty or not JSON. */
export function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export interface TransportAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** How one client words the failures of the transport in its own error class. */
export interface TransportErrors {
  /** No complete answer, body included, within the deadline. */
  timeout(timeoutMs: number, cause: unknown): OutboundError;
  /** No answer at all: refused, reset or unresolvable; `detail` is the system's code when there is one. */
  unreachable(detail: string, cause: unknown): OutboundError;
  /** An answer other than 2xx; a 3xx included, since redirects are never followed. */
  status(answer: TransportAnswer): OutboundError;
}

/** A client's words for no answer in time and no answer at all, both worth another attempt. */
export function noAnswer<C extends string>(
  error: new (code: C, message: string, init: OutboundErrorInit) => OutboundError,
  what: string,
  codes: { timeout: C; unreachable: C },
): Omit<TransportErrors, 'status'> {
  return {
    timeout: (ms, cause) =>
      new error(codes.timeout, `No answer from the ${what} within ${ms} ms.`, { failure: 'timeout', retryable: true, cause }),
    unreachable: (detail, cause) =>
      new error(codes.unreachable, `Could not reach the ${what} (${detail}).`, { failure: 'unreachable', retryable: true, cause }),
  };
}

export interface TransportRequest {
  method?: 'GET' | 'POST' | 'PUT';
  /** Relative to the base URL, which keeps its own path (`https://api.openai.com/v1`). */
  path?: string;
  /** An absolute URL the service handed out (an upload URL), instead of `path`. */
  url?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** Sent as `application/json`; else `body` as it is. */
  json?: unknown;
  body?: RequestInit['body'];
  /** The caller's cancellation: aborting rejects with its reason, never with an OutboundError. */
  signal?: AbortSignal;
}

export interface TransportOptions {
  baseUrl: string;
  timeoutMs: number;
  /** Sent as a bearer credential on every call. */
  apiKey?: string;
}

/**
 * One HTTP exchange at a time with a configured service: base URL, one deadline over the whole
 * exchange (a service that sends headers and then stalls must not hold a worker slot), and
 * redirects never followed, since a redirect would replay a POST, or carry the key, to a place
 * the client was not configured for. User-given URLs go through guardedFetch instead.
 */
export class HttpTransport {
  private readonly base: URL;

  constructor(
    what: string,
    private readonly opts: TransportOptions,
  ) {
    let base: URL;
    try {
      base = new URL(opts.baseUrl);
    } catch {
      // Caught here rather than at call time, where it would look like a transient outage.
      throw new Error(`${what}: base URL "${opts.baseUrl}" is not a URL`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`${what}: base URL must be http(s): ${opts.baseUrl}`);
    if (!Number.isInteger(opts.timeoutMs) || opts.timeoutMs <= 0) throw new Error(`${what}: timeoutMs must be a positive integer`);
    base.pathname = base.pathname.replace(/\/*$/, '/');
    this.base = base;
  }

  /** The 2xx answer with its body read; every other outcome is thrown, worded by `errors`. */
  async send(req: TransportRequest, errors: TransportErrors): Promise<TransportAnswer> {
    const url = new URL(req.url ?? req.path ?? '', this.base);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    let body = req.body;
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    }
    const deadline = AbortSignal.timeout(this.opts.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    let answer: TransportAnswer;
    try {
      const res = await fetch(url, { method: req.method ?? 'GET', headers, body, signal, redirect: 'manual' });
      answer = { status: res.status, headers: res.headers, text: await res.text() };
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason;
      if (deadline.aborted) throw errors.timeout(this.opts.timeoutMs, err);
      // fetch rejects with a TypeError for refused, reset and half-answered connections.
      const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
      throw errors.unreachable(cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err), err);
    }
    if (answer.status < 200 || answer.status >= 300) throw errors.status(answer);
    return answer;
  }
}
