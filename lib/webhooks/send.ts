import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { pinnedLookup, vetAddresses, type ResolvedAddress, type Resolver } from '../outbound/resolve';

// One delivery attempt over HTTP (spec 6 rules 2-3, ARCHITECTURE.md "The outside world"):
// resolve the receiver's host now, refuse any answer outside the address policy, connect to the
// very address that was checked (the socket's lookup is pinned to it, so a DNS answer that
// changes between check and connect cannot redirect the request; TLS still verifies the
// hostname), never follow redirects, and count only a 2xx answer within the deadline.
// Resolution and vetting are shared with URL knowledge ingest (lib/outbound/resolve.ts).

export { systemResolver, type ResolvedAddress, type Resolver } from '../outbound/resolve';

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
  }
  const verdict = vetAddresses(host, candidates, { allowLoopback: opts.allowLoopback });
  if (!verdict.ok) return refused(verdict.reason);
  const pinned = pinnedLookup(verdict.address);

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
