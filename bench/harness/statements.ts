import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { closedLoop, closedLoopCalls, type LatencySummary, type RunResult } from './load';
import { serverLoop, startServer, withServerCpu, type ServerHandle } from './servers';

// The read surfaces' baselines (bench/README.md, "Read surfaces"): the statements the API sent for
// one request, captured in its process and replayed bare, and the minimal query, in the same run.

/** One statement as pg sent it: its connection, its values in wire form (a Buffer as base64, to cross IPC). */
export type CapturedStatement = {
  client: number;
  text: string;
  name?: string;
  values: Array<string | null | { base64: string }>;
  startMs: number;
  endMs: number;
};
export type CaptureRequest = { method?: string; path: string; headers?: Record<string, string>; body?: string };
export type Query = (this: pg.Client, ...args: unknown[]) => unknown;

export const wireValues = (s: CapturedStatement) =>
  s.values.map((v) => (v !== null && typeof v === 'object' ? Buffer.from(v.base64, 'base64') : v));

/** Transaction control, which the explain outputs leave out. */
export const TX_CONTROL = /^\s*(begin|commit|rollback|start transaction)\b/i;

const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils') as { prepareValue: (v: unknown) => unknown };

/** pg's Client#query `original`, handing each statement to `onStatement` (start ms after `t0()`; its end set when pg answers). */
export function recordingQuery(original: Query, t0: () => number, onStatement: (s: CapturedStatement) => void): Query {
  const clients = new WeakMap<object, number>();
  let nextClient = 0;
  return function (this: pg.Client, ...args) {
    const [first, second] = args;
    const config = (typeof first === 'string' ? { text: first } : first) as { text: string; name?: string; values?: unknown[] };
    if (!clients.has(this)) clients.set(this, nextClient++);
    const s: CapturedStatement = {
      client: clients.get(this)!,
      text: config.text,
      name: config.name,
      values: (Array.isArray(second) ? second : (config.values ?? [])).map((v) => {
        const p = prepareValue(v);
        return Buffer.isBuffer(p) ? { base64: p.toString('base64') } : (p as string | null);
      }),
      startMs: performance.now() - t0(),
      endMs: NaN,
    };
    onStatement(s);
    const end = () => (s.endMs = performance.now() - t0());
    const cb = args.at(-1);
    if (typeof cb === 'function') args[args.length - 1] = (...a: unknown[]) => (end(), cb(...a));
    const r = original.apply(this, args);
    if (typeof (r as Promise<unknown>)?.then === 'function') (r as Promise<unknown>).then(end, end);
    return r;
  };
}

/** `run`'s result with every statement this process sent through pg while it ran, in the order sent (the tests count them too). */
export async function withRecordedStatements<T>(run: () => Promise<T>): Promise<{ result: T; statements: CapturedStatement[] }> {
  const statements: CapturedStatement[] = [];
  const original = pg.Client.prototype.query as unknown as Query;
  const t0 = performance.now();
  const record = (s: CapturedStatement) => statements.push(s);
  pg.Client.prototype.query = recordingQuery(original, () => t0, record) as never;
  try {
    return { result: await run(), statements };
  } finally {
    pg.Client.prototype.query = original as never;
  }
}

/** In the API process: the request once unrecorded (caches warm), then again with every pg query recorded. */
export async function captureRequest(server: Server, req: CaptureRequest): Promise<{ status: number; statements: CapturedStatement[] }> {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${req.path}`;
  const send = () =>
    fetch(url, { method: req.method ?? 'GET', headers: req.headers, body: req.body }).then(async (r) => (await r.arrayBuffer(), r.status));
  await send();
  const { result: status, statements } = await withRecordedStatements(send);
  for (const s of statements) if (Number.isNaN(s.endMs)) s.endMs = s.startMs;
  return { status, statements };
}

/**
 * The replay of one captured request: a statement starts once every statement that had ended
 * before it started has ended here too; a transaction runs in order on one connection.
 */
export function replayer(pool: pg.Pool, statements: readonly CapturedStatement[]): () => Promise<unknown[][]> {
  const units: CapturedStatement[][] = [];
  const open = new Map<number, CapturedStatement[]>();
  for (const s of statements) {
    const inTx = open.get(s.client);
    if (inTx) {
      inTx.push(s);
      if (/^\s*(commit|rollback)\b/i.test(s.text)) open.delete(s.client);
    } else {
      units.push([s]);
      if (/^\s*(begin|start transaction)\b/i.test(s.text)) open.set(s.client, units.at(-1)!);
    }
  }
  const deps = units.map((u, i) => units.flatMap((v, j) => (j < i && v.at(-1)!.endMs <= u[0]!.startMs ? [j] : [])));
  const config = (s: CapturedStatement) => ({ text: s.text, name: s.name, values: wireValues(s) });
  // Answers the rows of each unit's last statement.
  return async () => {
    const done: Array<Promise<unknown[]>> = [];
    for (const [i, u] of units.entries())
      done.push(
        Promise.all(deps[i]!.map((j) => done[j])).then(async () => {
          if (u.length === 1) return (await pool.query(config(u[0]!))).rows;
          const c = await pool.connect();
          try {
            let rows: unknown[] = [];
            for (const s of u) rows = (await c.query(config(s))).rows;
            return rows;
          } finally {
            c.release();
          }
        }),
      );
    return Promise.all(done);
  };
}

/** A request's statements, captured in the process that answered it (its `statements` call); refused unless a 200 with some. */
export async function captureStatements(server: Pick<ServerHandle, 'call'>, req: CaptureRequest): Promise<CapturedStatement[]> {
  const c = await server.call<{ status: number; statements: CapturedStatement[] }>('statements', req);
  if (c.status !== 200 || c.statements.length === 0)
    throw new Error(`${req.path} answered ${c.status} (${c.statements.length} statements)`);
  return c.statements;
}

export const describeStatements = (statements: readonly CapturedStatement[]) =>
  statements.map((s) => s.text.replace(/\s+/g, ' ').slice(0, 60)).join(' | ');

/** captureStatements, logged as `• <surface>: N statements: …`. */
export async function captureSurface(server: Pick<ServerHandle, 'call'>, surface: string, req: CaptureRequest, indent = '') {
  const statements = await captureStatements(server, req);
  console.log(`${indent}• ${surface}: ${statements.length} statements: ${describeStatements(statements)}`);
  return statements;
}

const rate = (r: { rps: number; latencyMs: LatencySummary }) => ({ rps: r.rps, latencyMs: r.latencyMs });
const lat = (l: LatencySummary) => `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms`;

/**
 * One surface three ways in a row with the same concurrency: the API (`api`, answered by `server`:
 * its CPU per call, with `profile` its profile, beside the load generator's), the replay of its
 * captured statements (`captured[i % n]` for call i; with `replayServer`, serve-replay.ts, behind
 * bare Koa too) and the minimal query (`minimal(i)`), with the ratios on lines a script can read.
 */
export async function measureSurface(o: {
  surface: string;
  corpus: string;
  pool: pg.Pool;
  connections: number;
  durationMs: number;
  warmupMs: number;
  server: ServerHandle;
  profile?: boolean;
  replayServer?: ServerHandle;
  captured: ReadonlyArray<readonly CapturedStatement[]>;
  api: () => Promise<RunResult>;
  minimal: (i: number) => Promise<unknown>;
}) {
  const tag = `${o.surface} [${o.corpus}]`;
  const replays = o.captured.map((c) => replayer(o.pool, c));
  const same = (i: number) => replays[i % replays.length]!();
  const loop = (call: (i: number) => Promise<unknown>, ms: number) => closedLoopCalls(call, { connections: o.connections, durationMs: ms });
  await loop(same, o.warmupMs);
  await loop(o.minimal, o.warmupMs);
  let load = process.cpuUsage();
  const apiRun = async () => {
    const before = process.cpuUsage();
    const r = await o.api();
    load = process.cpuUsage(before);
    return r;
  };
  const profile = o.profile
    ? { file: `${o.surface} ${o.corpus}`.replace(/[^A-Za-z0-9]+/g, '-'), title: `API process over ${tag} (per call)` }
    : undefined;
  const { result: api, cpuUs } = await withServerCpu(o.server, apiRun, (r) => r.requests, profile);
  const loadCpuUs = (load.user + load.system) / Math.max(1, api.requests);
  const sameRun = await loop(same, o.durationMs);
  const replay = o.replayServer;
  await replay?.call('load', { key: tag, captured: o.captured });
  const overHttp = replay && (await serverLoop(replay, { url: `${replay.baseUrl}/replay?${new URLSearchParams({ key: tag })}` }, o));
  const minimalRun = await loop(o.minimal, o.durationMs);
  const statements = o.captured.reduce((n, c) => n + c.length, 0) / o.captured.length;
  const apiOverSame = api.rps / sameRun.rps;
  const sameOverMinimal = minimalRun.rps / sameRun.rps;
  console.log(`  ${tag}: API ${api.rps.toFixed(1)}/s (${lat(api.latencyMs)}, errors ${api.errors})`);
  console.log(`  ${tag}: same ${statements.toFixed(1)} statements bare ${sameRun.rps.toFixed(1)}/s (${lat(sameRun.latencyMs)})`);
  console.log(`  ${tag}: minimal query ${minimalRun.rps.toFixed(1)}/s (${lat(minimalRun.latencyMs)})`);
  if (overHttp) {
    const { run, cpuUs } = overHttp;
    const http = `${run.rps.toFixed(1)}/s (${lat(run.latencyMs)}, errors ${run.errors}, server CPU ${cpuUs.toFixed(0)} µs/call)`;
    console.log(`  ${tag}: same statements behind bare Koa ${http}`);
    console.log(`  ${tag}: API / same statements behind bare Koa: ${(api.rps / run.rps).toFixed(2)}×`);
  }
  console.log(`  ${tag}: CPU per API call: server ${cpuUs.toFixed(0)} µs, load generator ${loadCpuUs.toFixed(0)} µs`);
  console.log(`  ${tag}: API / same statements bare: ${apiOverSame.toFixed(2)}×`);
  console.log(`  ${tag}: same statements / minimal: ${sameOverMinimal.toFixed(2)}×`);
  const { surface, corpus } = o;
  return {
    surface,
    corpus,
    statements,
    api: { ...rate(api), errors: api.errors },
    same: rate(sameRun),
    minimal: rate(minimalRun),
    apiOverSame,
    sameOverMinimal,
  };
}

type Minimal = { text: string; values: unknown[] };

/** EXPLAIN (ANALYZE, BUFFERS) of a request's statements (transaction control left out) and of the minimal query. */
export async function explainAll(pool: pg.Pool, statements: readonly CapturedStatement[], minimal: Minimal): Promise<void> {
  const plan = async (text: string, values: unknown[]) =>
    (await pool.query(`explain (analyze, buffers) ${text}`, values)).rows.map((row) => `      ${row['QUERY PLAN']}`).join('\n');
  for (const s of statements)
    if (!TX_CONTROL.test(s.text)) console.log(`    service: ${s.text.replace(/\s+/g, ' ')}\n${await plan(s.text, wireValues(s))}`);
  console.log(`    minimal: ${minimal.text.replace(/\s+/g, ' ')}\n${await plan(minimal.text, minimal.values)}`);
}

/**
 * A bench's GET surfaces at each of its sizes (`grow` before a size): each captured, explained
 * beside its minimal query with `explain`, then measureSurface, on the API process `api` (else one
 * started here), the replay server and `pool` (else one of `connections`).
 */
export async function measureReads(o: {
  sizes: Array<{ corpus: () => Promise<string> | string; grow?: () => Promise<void> }>;
  surfaces: ReadonlyArray<{ surface: string; path: string; headers: Record<string, string>; minimal: Minimal }>;
  connections: number;
  durationMs: number;
  warmupMs: number;
  profile?: boolean;
  explain?: boolean;
  api?: ServerHandle;
  pool?: pg.Pool;
}) {
  const server = o.api ?? (await startServer('app', 'bench/harness/serve-app.ts', process.env));
  const replayServer = await startServer('replay', 'bench/harness/serve-replay.ts', process.env);
  const pool = o.pool ?? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: o.connections });
  const out = [];
  try {
    for (const size of o.sizes) {
      await size.grow?.();
      const corpus = await size.corpus();
      for (const { surface, path, headers, minimal } of o.surfaces) {
        const captured = [await captureSurface(server, surface, { path, headers })];
        if (o.explain) await explainAll(pool, captured[0]!, minimal);
        const api = () => closedLoop({ url: `${server.baseUrl}${path}`, headers }, o);
        const query = () => pool.query(minimal.text, minimal.values);
        out.push(await measureSurface({ ...o, surface, corpus, server, replayServer, pool, captured, api, minimal: query }));
      }
    }
  } finally {
    await Promise.all([o.api ? null : server.stop(), replayServer.stop(), o.pool ? null : pool.end()]);
  }
  return out;
}
