import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { OutboundError, statusVerdict, type OutboundFailure } from './outbound';
import { literalAddress, onAllowedOrigin, pinnedLookup, vetAddresses, type ResolvedAddress, type Resolver } from './resolve';

// A GET of a user-given URL (URL knowledge ingest, docs/knowledge.md "URL ingest"), under the
// same guard as webhook delivery (ARCHITECTURE.md "The outside world"): every hop resolves its
// host, refuses private, loopback (unless allowed), link-local and metadata answers, connects to
// the address it checked, and is itself a checked request: redirects are followed only up to a
// bound, each one re-checked. The whole fetch has one deadline and the body one size cap.

export interface GuardedFetchOptions {
  allowLoopback: boolean;
  /**
   * Origins (`http://127.0.0.1:8080`) that may be on loopback while `allowLoopback` is off:
   * exact scheme, host and port as written, so a redirect from one to another port, to
   * `localhost`, `127.1` or `[::1]` is still refused. Private and metadata ranges stay refused.
   */
  allowOrigins?: readonly string[];
  allowHttp: boolean;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  resolve: Resolver;
  headers?: Record<string, string>;
}

export interface FetchedPage {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  contentType: string;
  /** The answer's headers (its cache headers, say: RFC 9111). */
  headers: IncomingHttpHeaders;
  body: Buffer;
}

// Each code's kind of failure; an answer with an error status has its status's.
const FAILURE = {
  url_invalid: 'refused',
  url_refused: 'refused',
  url_dns_failed: 'unreachable',
  url_timeout: 'timeout',
  url_too_large: 'bad_response',
  url_too_many_redirects: 'bad_response',
  url_http_status: 'refused',
  url_connection_failed: 'unreachable',
} as const satisfies Record<string, OutboundFailure>;

export type FetchErrorCode = keyof typeof FAILURE;

/** Why a fetch gave up; `retryable` says whether another attempt could answer differently. */
export class FetchError extends OutboundError {
  readonly service = 'url';
  declare readonly code: FetchErrorCode;

  constructor(code: FetchErrorCode, message: string, retryable: boolean, status: number | null = null) {
    super(code, message, {
      failure: status !== null && status >= 400 ? statusVerdict(status).failure : FAILURE[code],
      retryable,
      status,
    });
  }
}

function checkUrl(raw: string, allowHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FetchError('url_invalid', `${raw} is not an absolute URL.`, false);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowHttp))
    throw new FetchError('url_invalid', `${url.protocol} URLs are not fetched${allowHttp ? '; use http or https' : '; use https'}.`, false);
  if (url.username || url.password) throw new FetchError('url_invalid', 'URLs with credentials are not fetched.', false);
  return url;
}

async function vetted(url: URL, opts: GuardedFetchOptions, left: number, allowedOrigin: boolean): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let candidates: ResolvedAddress[];
  const literal = literalAddress(host);
  if (literal) candidates = [literal];
  else {
    let timer: NodeJS.Timeout | undefined;
    try {
      candidates = await Promise.race([
        opts.resolve(host),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new FetchError('url_timeout', `DNS for ${host} did not answer in time.`, true)), left);
        }),
      ]);
    } catch (err) {
      if (err instanceof FetchError) throw err;
      throw new FetchError(
        'url_dns_failed',
        `${host} did not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`,
        true,
      );
    } finally {
      clearTimeout(timer);
    }
  }
  const verdict = vetAddresses(host, candidates, { allowLoopback: opts.allowLoopback || allowedOrigin });
  if (!verdict.ok) {
    if (verdict.reason.startsWith('dns_failed')) throw new FetchError('url_dns_failed', verdict.reason, true);
    throw new FetchError('url_refused', verdict.reason, false);
  }
  return verdict.address;
}

interface Hop {
  status: number;
  location: string | null;
  contentType: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function requestOnce(url: URL, address: ResolvedAddress, opts: GuardedFetchOptions, left: number): Promise<Hop> {
  return new Promise<Hop>((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(url, {
      method: 'GET',
      headers: { 'User-Agent': 'content-scheduler-knowledge/1', Accept: 'text/html,text/plain;q=0.9,*/*;q=0.5', ...opts.headers },
      lookup: pinnedLookup(address),
      // A fresh connection per hop: a pooled socket could have been opened to another address.
      agent: false,
    });
    const timer = setTimeout(() => {
      req.destroy(new FetchError('url_timeout', `No complete answer from ${url.host} within ${opts.timeoutMs} ms.`, true));
    }, left);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const location = typeof res.headers.location === 'string' ? res.headers.location : null;
      const contentType = String(res.headers['content-type'] ?? '');
      if (status >= 300 && status < 400) {
        clearTimeout(timer);
        res.resume();
        resolve({ status, location, contentType, headers: res.headers, body: Buffer.alloc(0) });
        req.destroy();
        return;
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        clearTimeout(timer);
        req.destroy();
        reject(new FetchError('url_too_large', `The page is ${declared} bytes, over the ${opts.maxBytes}-byte limit.`, false));
        return;
      }
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        size += d.length;
        if (size > opts.maxBytes) {
          clearTimeout(timer);
          req.destroy();
          reject(new FetchError('url_too_large', `The page is over the ${opts.maxBytes}-byte limit.`, false));
          return;
        }
        parts.push(d);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status, location, contentType, headers: res.headers, body: Buffer.concat(parts) });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err instanceof FetchError ? err : new FetchError('url_connection_failed', `The answer broke off: ${err.message}`, true));
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        err instanceof FetchError
          ? err
          : new FetchError('url_connection_failed', `Could not reach ${url.host} (${err.code ?? err.message}).`, true),
      );
    });
    req.end();
  });
}

export async function guardedFetch(rawUrl: string, opts: GuardedFetchOptions): Promise<FetchedPage> {
  const started = performance.now();
  const left = () => {
    const ms = opts.timeoutMs - (performance.now() - started);
    if (ms <= 0) throw new FetchError('url_timeout', `The page did not arrive within ${opts.timeoutMs} ms.`, true);
    return ms;
  };
  let raw = rawUrl;
  let url = checkUrl(raw, opts.allowHttp);
  for (let hop = 0; ; hop++) {
    const address = await vetted(url, opts, left(), onAllowedOrigin(raw, url, opts.allowOrigins ?? []));
    const answer = await requestOnce(url, address, opts, left());
    if (answer.status >= 300 && answer.status < 400) {
      if (!answer.location) throw new FetchError('url_http_status', `HTTP ${answer.status} without a Location.`, false, answer.status);
      if (hop >= opts.maxRedirects)
        throw new FetchError(
          'url_too_many_redirects',
          opts.maxRedirects === 0 ? `HTTP ${answer.status}: redirects are not followed.` : `More than ${opts.maxRedirects} redirects.`,
          false,
          answer.status,
        );
      // Each hop is a new user-given URL: scheme, credentials and address are checked again.
      raw = answer.location;
      url = checkUrl(new URL(answer.location, url).toString(), opts.allowHttp);
      continue;
    }
    if (answer.status < 200 || answer.status >= 300)
      throw new FetchError(
        'url_http_status',
        `The page answered HTTP ${answer.status}.`,
        answer.status >= 500 || answer.status === 429,
        answer.status,
      );
    return { url: url.toString(), status: answer.status, contentType: answer.contentType, headers: answer.headers, body: answer.body };
  }
}
