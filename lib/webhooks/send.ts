import { promises as dns } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { refusedClass } from './addresses';

// One delivery attempt over HTTP (spec 6 rules 2-3, ARCHITECTURE.md "The outside world"):
// resolve the receiver's host now, refuse any answer outside the address policy, connect to the
// very address that was checked (the socket's lookup is pinned to it, so a DNS answer that
// changes between check and connect cannot redirect the request; TLS still verifies the
// hostname), never follow redirects, and count only a 2xx answer within the deadline.

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

export interface SendOptions {
  /** The whole attempt, DNS included, must end within this (spec 6 rule 2: 10 s). */
  timeoutMs: number;
  allowLoopback: boolean;
  resolve: Resolver;
}

/** refused: DNS or address policy, which spec 6 rule 3 still counts as a failed attempt. */
export type AttemptOutcome = 'delivered' | 'failed' | 'refused';

export interface SendResult {
  outcome: AttemptOutcome;
  statusCode: number | null;
  error: string | null;
  remoteAddress: string | null;
  durationMs: number;
}

class Deadline extends Error {}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Deadline()), Math.max(0, ms));
    }),
  ]).finally(() => clearTimeout(timer));
}

export async function sendWebhook(rawUrl: string, body: string, headers: Record<string, string>, opts: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const remaining = () => opts.timeoutMs - (performance.now() - started);
  const result = (r: Omit<SendResult, 'durationMs'>): SendResult => ({ ...r, durationMs: Math.round(performance.now() - started) });
  const refused = (error: string) => result({ outcome: 'refused', statusCode: null, error, remoteAddress: null });

  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return refused('invalid_url: the endpoint URL does not parse');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refused(`invalid_url: unsupported scheme ${url.protocol}`);
  const host = url.hostname.replace(/^\[|\]$/g, '');

  let candidates: ResolvedAddress[];
  if (isIP(host)) {
    candidates = [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
  } else {
    try {
      candidates = await withDeadline(opts.resolve(host), remaining());
    } catch (err) {
      if (err instanceof Deadline)
        return result({
          outcome: 'failed',
          statusCode: null,
          error: `timeout: DNS for ${host} did not answer within ${opts.timeoutMs} ms`,
          remoteAddress: null,
        });
      return refused(`dns_failed: ${host} did not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    if (candidates.length === 0) return refused(`dns_failed: ${host} has no addresses`);
  }
  const policy = { allowLoopback: opts.allowLoopback };
  const vetted = candidates.find((c) => refusedClass(c.address, policy) === null);
  if (!vetted) {
    const first = candidates[0]!;
    return refused(`address_refused: ${host} resolves to ${first.address}, a ${refusedClass(first.address, policy)} address`);
  }

  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [vetted]);
    else callback(null, vetted.address, vetted.family);
  };

  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let remoteAddress: string | null = null;
    const settle = (r: Omit<SendResult, 'durationMs' | 'remoteAddress'>) => {
      if (settled) return;
      settled = true;
      resolve(result({ ...r, remoteAddress }));
    };
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      lookup: pinned,
      // A fresh connection per attempt: a pooled socket could have been opened to another address.
      agent: false,
    });
    const timer = setTimeout(
      () => {
        settle({ outcome: 'failed', statusCode: null, error: `timeout: no response within ${opts.timeoutMs} ms` });
        req.destroy();
      },
      Math.max(0, remaining()),
    );
    req.on('socket', (socket) => {
      socket.once('connect', () => {
        remoteAddress = socket.remoteAddress ?? null;
      });
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) settle({ outcome: 'delivered', statusCode: status, error: null });
      else if (status >= 300 && status < 400)
        settle({ outcome: 'failed', statusCode: status, error: `redirect_not_followed: HTTP ${status}` });
      else settle({ outcome: 'failed', statusCode: status, error: `http_status: HTTP ${status}` });
      // The answer is in; the body is drained (and cut at the deadline) only to free the socket.
      res.resume();
      res.once('end', () => {
        clearTimeout(timer);
        req.destroy();
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      settle({ outcome: 'failed', statusCode: null, error: `connection_failed: ${err.code ?? err.message}` });
    });
    req.end(body);
  });
}
