// Bench: the agent transport (spec 4.9). Concurrent MCP sessions call one read tool in a closed
// loop (each session sends its next call when the previous answer has arrived), over streamable
// HTTP (/mcp) and legacy SSE (/sse + /message). The same read through REST (GET /v1/posts/{postId},
// keep-alive connections, the same concurrency) runs alongside as the baseline: the difference
// is what the MCP layer costs.
//
// Kinds: `rest` (plain HTTP client), `plain` (streamable HTTP spoken by the same plain HTTP
// client: initialize, notifications/initialized, then tools/call), `streamable` and `sse` (the
// official MCP SDK client). The load generator shares the machine with the server, and the SDK
// client costs several times the CPU per call of a plain client, so only `plain` vs `rest`
// compares the two doors of the server at equal client cost: that ratio is the target
// (≥ 0.8×, `--strict` exits 1 on a miss); the SDK kinds show what an SDK host sees.
//
//   npm run bench -- mcp                                  full run (≈ 1.5 min)
//   npm run bench -- mcp --sessions 32 --duration 20 --tool list_posts
//
// Standalone: it creates its own database (content_scheduler_bench_mcp, dropped first) with pg
// and migrates it before any app module is imported (they read the environment once), uses
// Redis db 12 (flushed), seeds through ops/provision, and runs the API process
// (api/main.ts: REST on PORT, MCP on MCP_PORT) as a child, so that the load generator and the
// server do not share an event loop. After a warm-up of every kind, rounds run in the order
// REST, plain, streamable, SSE, SSE, streamable, plain, REST and each figure is the mean of its two rounds. Results: a table on stdout,
// JSON in bench/results/mcp.json.

import { API_NODE_ARGS } from '../lib/apiRuntime';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { closeStores, resetStores } from './harness/database';
import { requestText as exchange, summarize, type LatencySummary } from './harness/load';
import { benchOptions } from './harness/options';
import { freePort } from '../tooling/ports';

const ROOT = path.resolve(import.meta.dirname, '..');
const DATABASE_URL = process.env.BENCH_MCP_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_mcp';
const REDIS_URL = process.env.BENCH_MCP_REDIS_URL ?? 'redis://127.0.0.1:6379/12';

type Kind = 'rest' | 'plain' | 'streamable' | 'sse';
const KINDS: readonly Kind[] = ['rest', 'plain', 'streamable', 'sse'];

const opt = benchOptions(
  {
    sessions: { type: 'string', default: '16' },
    duration: { type: 'string', default: '12' },
    warmup: { type: 'string', default: '5' },
    tool: { type: 'string', default: 'get_post' },
    only: { type: 'string' },
    strict: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
  },
  `mcp: concurrent MCP sessions calling a read tool, over streamable HTTP and SSE, with REST as the baseline.

Options:
  --sessions N   concurrent sessions (and REST connections) (default 16)
  --duration S   seconds per measured round (default 12)
  --warmup S     seconds of warm-up per kind before the measured rounds (default 5)
  --tool NAME    get_post (default) or list_posts (first page of 20 posts)
  --only KIND    run the rounds of one kind only: rest, plain, streamable or sse
  --strict       exit 1 when streamable HTTP (plain client) misses 0.8× REST's calls/s
  --profile      run the server with the V8 CPU profiler and print where its time went
                 (use with --only: the profile covers the whole run)

Environment: BENCH_MCP_DATABASE_URL (default ${DATABASE_URL}, dropped and recreated),
             BENCH_MCP_REDIS_URL (default ${REDIS_URL}, flushed).`,
);
const SESSIONS = Number(opt.sessions);
const DURATION_MS = Number(opt.duration) * 1000;
const WARMUP_MS = Number(opt.warmup) * 1000;
const TOOL = opt.tool!;
const ONLY = opt.only as Kind | undefined;
if (ONLY && !KINDS.includes(ONLY)) throw new Error('--only must be rest, plain, streamable or sse');
/** streamable HTTP through a plain HTTP client (the target's figure) ≥ this × REST's calls/s. */
const TARGET_RATIO = 0.8;
const PROFILE_DIR = path.join(ROOT, 'bench', 'results', 'profiles', 'mcp');
if (!['get_post', 'list_posts'].includes(TOOL)) throw new Error('--tool must be get_post or list_posts');

// The app modules read these once, at import.
Object.assign(process.env, {
  NODE_ENV: 'production',
  DATABASE_URL,
  REDIS_URL,
  LOG_LEVEL: 'error',
  // The limiter's script runs on every call as in production, but never refuses one.
  RATE_LIMIT_READ: '10000000',
  RATE_LIMIT_WRITE: '10000000',
});

// ---------------------------------------------------------------------------------------------

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 1/100 s. */
const CLOCK_TICKS_PER_S = 100;

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); null elsewhere. */
function cpuSeconds(pid: number): number | null {
  try {
    // Fields after the command name: state is [0], utime [11], stime [12] (proc(5)).
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
  } catch {
    return null;
  }
}

interface Round {
  kind: Kind;
  callsPerSecond: number;
  ok: number;
  errors: number;
  latencyMs: LatencySummary;
  serverCpuUsPerCall: number | null;
  /** The load generator's own CPU per call (the SDK clients, or the plain HTTP client for REST). */
  clientCpuUsPerCall: number;
  connectMs?: LatencySummary;
}

/** Each worker loops `step` until the deadline; latencies of successful calls only. */
async function closedLoop(workers: number, durationMs: number, step: (w: number) => Promise<boolean>, serverPid: number) {
  const latencies: number[] = [];
  let ok = 0,
    errors = 0;
  const cpu0 = cpuSeconds(serverPid);
  const own0 = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          if (await step(w)) {
            ok++;
            latencies.push(performance.now() - t0);
          } else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu1 = cpuSeconds(serverPid);
  const own = process.cpuUsage(own0);
  return {
    callsPerSecond: ok / seconds,
    ok,
    errors,
    latencyMs: summarize(latencies),
    serverCpuUsPerCall: cpu0 !== null && cpu1 !== null && ok ? ((cpu1 - cpu0) * 1e6) / ok : null,
    clientCpuUsPerCall: ok ? (own.user + own.system) / ok : 0,
  };
}

/** The JSON-RPC answer to request `id` in a body that is JSON or an SSE stream. */
function answerOf(text: string, contentType: string | undefined): { result?: { isError?: boolean }; error?: unknown } | null {
  if (contentType?.startsWith('application/json')) return JSON.parse(text);
  for (const line of text.split('\n').reverse()) {
    if (!line.startsWith('data: ')) continue;
    const msg = JSON.parse(line.slice(6));
    if ('result' in msg || 'error' in msg) return msg;
  }
  return null;
}

/**
 * A streamable HTTP session spoken by a plain keep-alive HTTP client (what a host at scale
 * does with a lean client), so that its CPU per call is the REST client's and the ratio to
 * REST measures the server's door, not the SDK client's web streams and zod.
 */
class PlainSession {
  private sessionId = '';
  private protocolVersion = '2025-06-18';
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private nextId = 1;
  constructor(
    private readonly url: URL,
    private readonly token: string,
  ) {}

  private headers(): Record<string, string> {
    return {
      authorization: `Bearer ${this.token}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(this.sessionId ? { 'mcp-session-id': this.sessionId, 'mcp-protocol-version': this.protocolVersion } : {}),
    };
  }

  async open(): Promise<void> {
    const init = await exchange(
      this.agent,
      this.url,
      'POST',
      this.headers(),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: this.protocolVersion, capabilities: {}, clientInfo: { name: 'bench-plain', version: '1' } },
      }),
    );
    const sid = init.headers['mcp-session-id'];
    if (init.status !== 200 || typeof sid !== 'string') throw new Error(`initialize answered ${init.status}`);
    this.sessionId = sid;
    const answer = answerOf(init.body, init.headers['content-type']) as { result?: { protocolVersion?: string } } | null;
    if (answer?.result?.protocolVersion) this.protocolVersion = answer.result.protocolVersion;
    const ack = await exchange(
      this.agent,
      this.url,
      'POST',
      this.headers(),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    );
    if (ack.status !== 202) throw new Error(`notifications/initialized answered ${ack.status}`);
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<boolean> {
    const res = await exchange(
      this.agent,
      this.url,
      'POST',
      this.headers(),
      JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method: 'tools/call', params: { name, arguments: args } }),
    );
    if (res.status !== 200) return false;
    const answer = answerOf(res.body, res.headers['content-type']);
    return !!answer?.result && answer.result.isError !== true;
  }

  async close(): Promise<void> {
    await exchange(this.agent, this.url, 'DELETE', this.headers()).catch(() => undefined);
    this.agent.destroy();
  }
}

let exitCode = 0;

async function main() {
  const bench = await setUp();
  let rounds: Round[];
  try {
    rounds = await run(bench);
  } finally {
    bench.server.kill('SIGTERM');
    await new Promise((r) => bench.server.once('exit', r));
  }
  await report(rounds);
}

type Bench = Awaited<ReturnType<typeof setUp>>;

/** The bench's stores, 200 posts of one project, the API process with its MCP door answering. */
async function setUp() {
  console.log(`mcp bench: ${SESSIONS} sessions, ${opt.duration} s per round, tool ${TOOL}`);
  await resetStores(DATABASE_URL, REDIS_URL);

  const { benchWorkspace } = await import('./harness/seed');
  const { db } = await import('../lib/db');
  const { newId } = await import('../lib/ids');
  const { workspace, project, key } = await benchWorkspace({
    name: 'Bench MCP',
    project: { name: 'Bench Person', username: 'bench-person', connection: 'connected' },
    scopes: ['read'],
  });
  const now = Date.now();
  const posts = Array.from({ length: 200 }, (_, i) => ({
    id: newId('post'),
    workspace_id: workspace.id,
    project_id: project.id,
    status: 'draft',
    title: `Post ${i}`,
    content: `Line one of post ${i}.\n\nA paragraph of body text that reads like a real post, with a #hashtag and an emoji 🚀.`.repeat(3),
    content_type: 'PERSONAL',
    created_at: new Date(now - i * 60_000),
  }));
  await db()('posts').insert(posts);
  const postId = posts[0]!.id;
  await closeStores();

  const [port, mcpPort] = [await freePort(), await freePort()];
  const apiUrl = `http://127.0.0.1:${port}`;
  const mcpUrl = `http://127.0.0.1:${mcpPort}`;
  if (opt.profile) fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
  const profileArgs = opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const server: ChildProcess = spawn(process.execPath, [...API_NODE_ARGS, ...profileArgs, '--import', 'tsx', 'api/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), MCP_PORT: String(mcpPort), PUBLIC_URL: apiUrl, MCP_PUBLIC_URL: mcpUrl },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (const deadline = Date.now() + 60_000; ;) {
      if (
        await fetch(`${mcpUrl}/.well-known/oauth-protected-resource`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (Date.now() > deadline || server.exitCode !== null) throw new Error('the API process did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    server.kill('SIGTERM');
    throw err;
  }
  const args = TOOL === 'get_post' ? { postId } : { projectId: project.id, limit: 20 };
  const restPath = TOOL === 'get_post' ? `/v1/posts/${postId}` : `/v1/posts?projectId=${project.id}&limit=20`;
  const headers = { Authorization: `Bearer ${key}` };

  return { server, apiUrl, mcpUrl, key, args, restPath, headers };
}

async function openSessions({ mcpUrl, headers }: Bench, kind: 'streamable' | 'sse') {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
  const connectMs: number[] = [];
  const clients = await Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      const client = new Client({ name: 'bench', version: '1' });
      const t0 = performance.now();
      await client.connect(
        kind === 'streamable'
          ? new StreamableHTTPClientTransport(new URL('/mcp', mcpUrl), { requestInit: { headers } })
          : new SSEClientTransport(new URL('/sse', mcpUrl), { requestInit: { headers } }),
      );
      connectMs.push(performance.now() - t0);
      return client;
    }),
  );
  return { clients, connect: summarize(connectMs) };
}

/** One closed-loop round of one transport: REST, streamable HTTP with a plain client, or the SDK client's streamable HTTP or SSE. */
async function round(b: Bench, kind: Round['kind'], durationMs: number): Promise<Round> {
  const { server, apiUrl, mcpUrl, key, args, restPath } = b;
  if (kind === 'rest') {
    const agent = new http.Agent({ keepAlive: true, maxSockets: SESSIONS, maxFreeSockets: SESSIONS });
    const url = new URL(apiUrl + restPath);
    await closedLoop(
      SESSIONS,
      Math.min(WARMUP_MS, 2_000),
      async () => (await exchange(agent, url, 'GET', { authorization: `Bearer ${key}` })).status === 200,
      server.pid!,
    );
    const result = await closedLoop(
      SESSIONS,
      durationMs,
      async () => (await exchange(agent, url, 'GET', { authorization: `Bearer ${key}` })).status === 200,
      server.pid!,
    );
    agent.destroy();
    return { kind, ...result };
  }
  if (kind === 'plain') {
    const t0 = performance.now();
    const sessions = Array.from({ length: SESSIONS }, () => new PlainSession(new URL('/mcp', mcpUrl), key));
    await Promise.all(sessions.map((x) => x.open()));
    const openMs = (performance.now() - t0) / SESSIONS;
    const plainStep = (w: number) => sessions[w]!.callTool(TOOL, args);
    await closedLoop(SESSIONS, Math.min(WARMUP_MS, 2_000), plainStep, server.pid!);
    const result = await closedLoop(SESSIONS, durationMs, plainStep, server.pid!);
    await Promise.all(sessions.map((x) => x.close()));
    return { kind, ...result, connectMs: summarize([openMs]) };
  }
  const opened = await openSessions(b, kind);
  const step = async (w: number) => {
    const r = await opened.clients[w]!.callTool({ name: TOOL, arguments: args });
    return r.isError !== true;
  };
  await closedLoop(SESSIONS, Math.min(WARMUP_MS, 2_000), step, server.pid!);
  const result = await closedLoop(SESSIONS, durationMs, step, server.pid!);
  await Promise.all(opened.clients.map((c) => c.close()));
  return { kind, ...result, connectMs: opened.connect };
}

/** A warm-up of every kind, then the measured rounds in ABBA order. */
async function run(b: Bench): Promise<Round[]> {
  const kinds = KINDS.filter((k) => !ONLY || k === ONLY);
  // Both processes' code paths are JIT-compiled before anything is measured.
  console.log(`  warming up (${opt.warmup} s per kind)`);
  for (const kind of kinds) await round(b, kind, WARMUP_MS);

  const rounds: Round[] = [];
  for (const kind of [...kinds, ...[...kinds].reverse()]) {
    const result = await round(b, kind, DURATION_MS);
    rounds.push(result);
    console.log(
      `  ${kind.padEnd(10)} ${result.callsPerSecond.toFixed(0).padStart(6)} calls/s  p50 ${result.latencyMs.p50.toFixed(1)} ms  p99 ${result.latencyMs.p99.toFixed(1)} ms  srv ${result.serverCpuUsPerCall?.toFixed(0) ?? '?'} µs/call  client ${result.clientCpuUsPerCall.toFixed(0)} µs/call  errors ${result.errors}`,
    );
  }

  return rounds;
}

async function report(rounds: Round[]) {
  const mean = (kind: Round['kind']) => {
    const rs = rounds.filter((r) => r.kind === kind);
    const avg = (f: (r: Round) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
    return {
      kind,
      callsPerSecond: avg((r) => r.callsPerSecond),
      p50Ms: avg((r) => r.latencyMs.p50),
      p99Ms: avg((r) => r.latencyMs.p99),
      maxMs: Math.max(...rs.map((r) => r.latencyMs.max)),
      errors: rs.reduce((a, r) => a + r.errors, 0),
      serverCpuUsPerCall: rs.every((r) => r.serverCpuUsPerCall !== null) ? avg((r) => r.serverCpuUsPerCall!) : null,
      clientCpuUsPerCall: avg((r) => r.clientCpuUsPerCall),
      sessionOpenP50Ms: rs[0]!.connectMs ? avg((r) => r.connectMs!.p50) : null,
    };
  };
  const summary = (['plain', 'streamable', 'sse', 'rest'] as const).filter((k) => rounds.some((r) => r.kind === k)).map(mean);
  const rest = summary.find((s) => s.kind === 'rest')?.callsPerSecond ?? NaN;
  console.log('\n  transport    calls/s   p50 ms   p99 ms   max ms   srv CPU µs/call   client CPU µs/call   open p50 ms   vs REST');
  for (const s of summary) {
    console.log(
      `  ${s.kind.padEnd(10)} ${s.callsPerSecond.toFixed(0).padStart(9)} ${s.p50Ms.toFixed(1).padStart(8)} ${s.p99Ms.toFixed(1).padStart(8)} ${s.maxMs.toFixed(1).padStart(8)} ${(s.serverCpuUsPerCall?.toFixed(0) ?? 'n/a').padStart(17)} ${s.clientCpuUsPerCall.toFixed(0).padStart(20)} ${(s.sessionOpenP50Ms?.toFixed(1) ?? '-').padStart(13)} ${((s.callsPerSecond / rest) * 100).toFixed(0).padStart(8)} %`,
    );
  }
  const plain = summary.find((s) => s.kind === 'plain');
  const restRow = summary.find((s) => s.kind === 'rest');
  const target = plain && restRow ? { ratio: plain.callsPerSecond / restRow.callsPerSecond, min: TARGET_RATIO } : null;
  if (target) {
    const cpuRatio =
      plain!.serverCpuUsPerCall && restRow!.serverCpuUsPerCall ? restRow!.serverCpuUsPerCall / plain!.serverCpuUsPerCall : null;
    console.log(
      `\n  baseline REST ${restRow!.callsPerSecond.toFixed(0)} calls/s; streamable HTTP (plain client) ${plain!.callsPerSecond.toFixed(0)} calls/s = ${target.ratio.toFixed(2)}× (target ≥ ${TARGET_RATIO}×): ${target.ratio >= TARGET_RATIO ? 'met' : 'MISSED'}` +
        (cpuRatio !== null ? `; server CPU per call REST/MCP ${cpuRatio.toFixed(2)}` : ''),
    );
    if (opt.strict && target.ratio < TARGET_RATIO) exitCode = 1;
  }
  const out = {
    bench: 'mcp',
    target,
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    options: { sessions: SESSIONS, durationS: DURATION_MS / 1000, warmupS: WARMUP_MS / 1000, tool: TOOL },
    summary,
    rounds,
  };
  fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'bench', 'results', 'mcp.json'), JSON.stringify(out, null, 2));
  console.log('\n  written to bench/results/mcp.json');
  if (opt.profile) {
    const { printProfile, summarizeProfile } = await import('./harness/profile');
    for (const f of fs.readdirSync(PROFILE_DIR).filter((x) => x.endsWith('.cpuprofile')))
      printProfile('server', summarizeProfile(path.join(PROFILE_DIR, f), ROOT, 25));
  }
}

main().then(
  () => process.exit(exitCode),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
