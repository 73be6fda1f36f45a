import http, { type OutgoingHttpHeaders } from 'node:http';
import { quantileOfSorted, tally } from './format';

// The load generator (bench/README.md): closed loops (each connection sends its next request once
// the previous answer is read) and open loops (a fixed schedule, latency from the scheduled time).

export type Target = { url: string; headers?: Record<string, string> };
export type LatencySummary = Record<'count' | 'mean' | 'p50' | 'p90' | 'p99' | 'p999' | 'max', number>;
/** A run's answers: `statuses` counts them by HTTP status ('error:<code>' for socket-level failures); bytes and rps of the 200s. */
export type RunResult = ReturnType<ReturnType<typeof runTally>['result']>;

export function summarize(values: ArrayLike<number>): LatencySummary {
  const v = Float64Array.from(values).sort();
  const at = (q: number) => (v.length ? quantileOfSorted(v, q) : 0);
  const mean = v.length ? v.reduce((a, x) => a + x, 0) / v.length : 0;
  return { count: v.length, mean, p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: at(1) };
}

/** One request on `agent` (false: a connection of its own), answered when its whole body has arrived (kept unless `keep` is false). */
export function exchange(agent: http.Agent | false, url: URL, method: string, headers: OutgoingHttpHeaders, body?: string, keep = true) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: number; body: Buffer }>((resolve, reject) => {
    const options = { agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers };
    const req = http.request(options, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (keep) chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One request on `agent`, answered with its status, its headers and its whole body as text. */
export async function requestText(agent: http.Agent, url: URL, method: string, headers: OutgoingHttpHeaders, body?: string) {
  const length = body ? { 'content-length': String(Buffer.byteLength(body)) } : {};
  const r = await exchange(agent, url, method, { ...headers, ...length }, body);
  return { status: r.status, headers: r.headers, body: r.body.toString('utf8') };
}

// keepAlive, as real clients; LIFO keeps the hot sockets busy.
const newAgent = (maxSockets: number) => new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' });

/** One request, body parsed as JSON when it is (else the text, for the error message). */
export async function getJson(t: Target) {
  const r = await exchange(false, new URL(t.url), 'GET', t.headers ?? {});
  const text = r.body.toString('utf8');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* the text, for the error message */
  }
  return { status: r.status, headers: r.headers, body };
}

/** The answers of one run as they come: statuses, bytes of the 200s, latencies. */
function runTally() {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let [ok, bytes] = [0, 0];
  return {
    async send(from: number, request: () => Promise<{ status: number; bytes?: number }>) {
      try {
        const r = await request();
        latencies.push(performance.now() - from);
        tally(statuses, String(r.status));
        if (r.status === 200) [ok, bytes] = [ok + 1, bytes + (r.bytes ?? 0)];
      } catch (err) {
        tally(statuses, `error:${(err as NodeJS.ErrnoException).code ?? 'unknown'}`);
      }
    },
    result(durationS: number) {
      const requests = Object.values(statuses).reduce((x, y) => x + y, 0);
      const bytesPerResponse = ok ? bytes / ok : 0;
      return {
        durationS,
        requests,
        ok,
        errors: requests - ok,
        statuses,
        rps: ok / durationS,
        bytesPerResponse,
        latencyMs: summarize(latencies),
      };
    },
  };
}

/** One request of a run: the `i`th connection's next in a closed loop, the `i`th of an open one. */
type Step = (i: number, agent: http.Agent) => Promise<{ status: number; bytes?: number }>;

/** A step of its own, or requests to fixed targets: request i goes to targets[i % n]. */
function stepOf(target: Target | Target[] | Step): Step {
  if (typeof target === 'function') return target;
  const targets = [target].flat().map((t) => ({ url: new URL(t.url), headers: { ...t.headers, connection: 'keep-alive' } }));
  let next = 0;
  return (_i, agent) => {
    const t = targets[next++ % targets.length]!;
    return exchange(agent, t.url, 'GET', t.headers, undefined, false);
  };
}

/** `connections` callers, each calling again as soon as its call returns, until `durationMs` is up; answers the seconds taken. */
async function untilDeadline(opts: { connections: number; durationMs: number }, call: (connection: number) => Promise<void>) {
  const started = performance.now();
  const deadline = started + opts.durationMs;
  await Promise.all(
    Array.from({ length: opts.connections }, async (_, connection) => {
      while (performance.now() < deadline) await call(connection);
    }),
  );
  return (performance.now() - started) / 1000;
}

/** A closed loop; with several targets, request i goes to targets[i % n] and the latencies are over all of them. */
export async function closedLoop(target: Target | Target[] | Step, opts: { connections: number; durationMs: number }): Promise<RunResult> {
  const step = stepOf(target);
  const agent = newAgent(opts.connections);
  const run = runTally();
  const elapsed = await untilDeadline(opts, (connection) => run.send(performance.now(), () => step(connection, agent)));
  agent.destroy();
  return run.result(elapsed);
}

/**
 * A closed loop over an async call (call i, on connection c). A throw ends the run unless
 * `tolerate`: then it counts as an error. `inWindow`: the calls answered before the deadline.
 */
export async function closedLoopCalls(
  call: (i: number, connection: number) => Promise<unknown>,
  opts: { connections: number; durationMs: number; tolerate?: boolean },
) {
  const latencies: number[] = [];
  const deadline = performance.now() + opts.durationMs;
  let [n, inWindow, errors] = [0, 0, 0];
  let firstError: string | undefined;
  const durationS = await untilDeadline(opts, async (connection) => {
    const t0 = performance.now();
    try {
      await call(n++, connection);
    } catch (err) {
      if (!opts.tolerate) throw err;
      errors++;
      firstError ??= err instanceof Error ? err.message : String(err);
      return;
    }
    const t1 = performance.now();
    if (t1 <= deadline) inWindow++;
    latencies.push(t1 - t0);
  });
  const calls = latencies.length;
  return { durationS, calls, rps: calls / durationS, latencyMs: summarize(latencies), inWindow, errors, firstError };
}

/** An open loop; `sendLagMs`: how late this process fired requests relative to their schedule. */
export async function openLoop(t: Target | Step, opts: { rate: number; durationMs: number }) {
  const step = stepOf(t);
  // Generous socket cap: a server that falls behind gets the pile-up, not this process.
  const agent = newAgent(256);
  const interval = 1000 / opts.rate;
  const total = Math.round((opts.durationMs / 1000) * opts.rate);
  const run = runTally();
  const lags: number[] = [];
  const inflight: Promise<void>[] = [];
  const start = performance.now() + 5;
  const fire = (i: number) => {
    const scheduled = start + i * interval;
    lags.push(performance.now() - scheduled);
    return run.send(scheduled, () => step(i, agent));
  };
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      // Every slot whose time has come, even if the timer woke late.
      while (next < total && start + next * interval <= now) inflight.push(fire(next++));
      if (next >= total) return resolve();
      setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    setTimeout(tick, Math.max(0, start - performance.now()));
  });
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  return { ...run.result(elapsed), targetRate: opts.rate, sendLagMs: summarize(lags) };
}
