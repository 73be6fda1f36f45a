// Bench: the agent transport (spec 4.9) against its REST twin, tool by tool. For every read tool
// that has a REST twin, concurrent MCP sessions call the tool in a closed loop (each session
// sends its next call when the previous answer has arrived) and, interleaved with them in the
// same run, the same number of keep-alive REST connections send the twin's GET: the ratio of
// their calls per second is what the MCP door costs over REST for that read. The target is
// ≥ 0.8× for every tool; `--strict` exits 1 on a miss.
//
// MCP kinds: `plain` (streamable HTTP spoken by the same plain HTTP client as REST: initialize,
// notifications/initialized, then tools/call), `streamable` and `sse` (the official MCP SDK
// client). The load generator shares the machine with the server, and the SDK client costs
// several times the CPU per call of a plain client, so only `plain` vs `rest` compares the two
// doors of the server at equal client cost: that ratio carries the target; the SDK kinds show
// what an SDK host sees.
//
//   npm run bench -- mcp                                     every read tool, rest vs plain (≈ 7 min)
//   npm run bench -- mcp --tools search_knowledge_base,get_post --duration 5
//   npm run bench -- mcp --tools get_post --kinds rest,plain,streamable,sse
//   npm run bench -- mcp --tools search_knowledge_base --kinds plain --profile
//
// Standalone: it creates its own database (content_scheduler_bench_mcp, dropped first) with pg
// and migrates it before any app module is imported (they read the environment once), uses
// Redis db 12 (flushed), seeds a workspace through ops/provision and the REST door (posts,
// notes, ideas, sources, jobs, media rows, a knowledge corpus of --chunks chunks stored as its
// ingest stores it), runs the network simulator (sim/network) in this process for the one
// open-world read (search_viral_posts), and runs the API process (api/main.ts: REST on PORT, MCP
// on MCP_PORT) as a child, so that the load generator and the server do not share an event
// loop. Per tool: a warm-up of every kind, then --rounds short rounds of each kind, alternating
// (rest, plain, plain, rest, rest, plain, …), so that the shared machine's load, which moves by
// the second, falls on both doors alike; the ratio is the median of the ratios of adjacent
// rounds, the rates the mean of a kind's rounds. Results: a line per tool (`MCP <tool> / REST
// twin: 0.NN×`), a table on stdout, JSON in bench/results/mcp.json.

import { API_NODE_ARGS } from '../lib/apiRuntime';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { closeStores, resetStores } from './harness/database';
import { QUERIES } from './harness/knowledgeCorpus';
import { requestText as exchange, summarize, type LatencySummary } from './harness/load';
import { benchOptions, numberOption } from './harness/options';
import { freePort } from '../tooling/ports';

const ROOT = path.resolve(import.meta.dirname, '..');
const DATABASE_URL = process.env.BENCH_MCP_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_mcp';
const REDIS_URL = process.env.BENCH_MCP_REDIS_URL ?? 'redis://127.0.0.1:6379/12';

type Kind = 'rest' | 'plain' | 'streamable' | 'sse';
const KINDS: readonly Kind[] = ['rest', 'plain', 'streamable', 'sse'];
type McpKind = Exclude<Kind, 'rest'>;

const opt = benchOptions(
  {
    sessions: { type: 'string', default: '16' },
    duration: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '1' },
    tools: { type: 'string' },
    kinds: { type: 'string', default: 'rest,plain' },
    chunks: { type: 'string', default: '10000' },
    strict: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
  },
  `mcp: every read tool with a REST twin, MCP sessions against REST connections, interleaved.

Options:
  --sessions N   concurrent sessions (and REST connections) (default 16)
  --duration S   seconds per measured round (default 1)
  --rounds N     measured rounds per kind and tool, alternating (default 6)
  --warmup S     seconds of warm-up per kind and tool before its measured rounds (default 1)
  --tools A,B    the tools to drive (default: every read tool with a REST twin)
  --kinds K,…    rest, plain, streamable, sse (default rest,plain); the ratio needs rest
  --chunks N     chunks in the knowledge corpus the search runs over (default 10000)
  --strict       exit 1 when a tool's plain MCP calls/s miss 0.8× its REST twin's
  --profile      run the server with the V8 CPU profiler and print where its time went
                 (the profile covers the whole run: narrow it with --tools and --kinds)

Environment: BENCH_MCP_DATABASE_URL (default ${DATABASE_URL}, dropped and recreated),
             BENCH_MCP_REDIS_URL (default ${REDIS_URL}, flushed).`,
);
const SESSIONS = numberOption(opt, 'sessions', { min: 1, integer: true });
const DURATION_MS = numberOption(opt, 'duration', { min: 0.5 }) * 1000;
const WARMUP_MS = numberOption(opt, 'warmup') * 1000;
const ROUNDS = numberOption(opt, 'rounds', { min: 1, integer: true });
const CHUNKS = numberOption(opt, 'chunks', { integer: true });
const RUN_KINDS = opt.kinds!.split(',').map((k) => k.trim()) as Kind[];
for (const k of RUN_KINDS) if (!KINDS.includes(k)) throw new Error(`--kinds: ${k} is not one of ${KINDS.join(', ')}`);
const MCP_KINDS = RUN_KINDS.filter((k): k is McpKind => k !== 'rest');
/** A tool's plain MCP calls/s ≥ this × its REST twin's. */
const TARGET_RATIO = 0.8;
const PROFILE_DIR = path.join(ROOT, 'bench', 'results', 'profiles', 'mcp');

// The app modules read these once, at import.
Object.assign(process.env, {
  NODE_ENV: 'production',
  DATABASE_URL,
  REDIS_URL,
  LOG_LEVEL: 'error',
  // The limiter's script runs on every call as in production, but never refuses one.
  RATE_LIMIT_READ: '10000000',
  RATE_LIMIT_WRITE: '10000000',
  LLM_WRITER: 'builtin',
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
  tool: string;
  kind: Kind;
  callsPerSecond: number;
  ok: number;
  errors: number;
  latencyMs: LatencySummary;
  serverCpuUsPerCall: number | null;
  /** The load generator's own CPU per call (the SDK clients, or the plain HTTP client for REST). */
  clientCpuUsPerCall: number;
  /** What the first failed call of the round said (a failure is thrown with the answer). */
  firstError?: string;
}

/**
 * Each worker loops `step` until the deadline (`i` counts the calls). Calls/s counts the calls
 * answered within the window, over the window: a call still in flight at the deadline is not
 * counted, so that a round's drain (as long as the slowest call) does not weigh on the slower
 * door. CPU per call is over the whole round and every answered call. Latencies of successful
 * calls only.
 */
async function closedLoop(workers: number, durationMs: number, step: (w: number, i: number) => Promise<boolean>, serverPid: number) {
  const latencies: number[] = [];
  let ok = 0,
    inWindow = 0,
    errors = 0,
    calls = 0;
  let firstError: string | undefined;
  const cpu0 = cpuSeconds(serverPid);
  const own0 = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          if (await step(w, calls++)) {
            const t1 = performance.now();
            ok++;
            if (t1 <= deadline) inWindow++;
            latencies.push(t1 - t0);
          } else errors++;
        } catch (err) {
          errors++;
          firstError ??= err instanceof Error ? err.message : String(err);
        }
      }
    }),
  );
  const cpu1 = cpuSeconds(serverPid);
  const own = process.cpuUsage(own0);
  return {
    callsPerSecond: inWindow / (durationMs / 1000),
    ok,
    errors,
    latencyMs: summarize(latencies),
    serverCpuUsPerCall: cpu0 !== null && cpu1 !== null && ok ? ((cpu1 - cpu0) * 1e6) / ok : null,
    clientCpuUsPerCall: ok ? (own.user + own.system) / ok : 0,
    firstError,
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

  /** One tools/call: whether it succeeded, and the answer's text (to show a failure). */
  async call(name: string, args: Record<string, unknown>): Promise<{ ok: boolean; text: string }> {
    const res = await exchange(
      this.agent,
      this.url,
      'POST',
      this.headers(),
      JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method: 'tools/call', params: { name, arguments: args } }),
    );
    if (res.status !== 200) return { ok: false, text: `${res.status} ${res.body}` };
    const answer = answerOf(res.body, res.headers['content-type']);
    return { ok: !!answer?.result && answer.result.isError !== true, text: res.body };
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
    await bench.sim.close();
  }
  await report(rounds);
}

type Bench = Awaited<ReturnType<typeof setUp>>;

/** A read tool and its REST twin's GET, for the `i`-th call (the search rotates its queries). */
interface Twin {
  tool: string;
  args: (i: number) => Record<string, unknown>;
  rest: (i: number) => string;
}

const qs = (params: Record<string, string | number>) =>
  `?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`;

/**
 * The read tools with their twins (the pairs of test/mcp/parity.test.ts), over the seeded
 * workspace: ids of seeded rows, the project with the posts and the corpus, a month range.
 */
function twins(f: Fixture): Twin[] {
  const { projectId } = f;
  const month = { from: '2031-01-01', to: '2031-01-31' };
  const fixed = (tool: string, args: Record<string, unknown>, rest: string): Twin => ({ tool, args: () => args, rest: () => rest });
  return [
    fixed('get_workspace', {}, '/v1/workspaces/me'),
    fixed('list_workspaces', {}, '/v1/workspaces'),
    fixed('get_workspace_context', {}, '/v1/workspaces/context'),
    fixed('list_team', {}, '/v1/team'),
    fixed('get_usage', {}, '/v1/usage'),
    fixed('list_projects', {}, '/v1/projects'),
    fixed('get_project', { projectId }, `/v1/projects/${projectId}`),
    fixed('list_notes', { projectId }, `/v1/notes${qs({ projectId })}`),
    fixed('get_note', { noteId: f.noteId }, `/v1/notes/${f.noteId}`),
    fixed('list_posts', { projectId, limit: 20 }, `/v1/posts${qs({ projectId, limit: 20 })}`),
    fixed('get_post', { postId: f.postId }, `/v1/posts/${f.postId}`),
    fixed('list_post_statuses', {}, '/v1/post-statuses'),
    fixed('get_source', { sourceId: f.sourceId }, `/v1/sources/${f.sourceId}`),
    fixed('list_jobs', {}, '/v1/jobs'),
    fixed('get_job', { jobId: f.jobId }, `/v1/jobs/${f.jobId}`),
    fixed('list_ideas', { projectId }, `/v1/ideas${qs({ projectId })}`),
    fixed('get_idea', { ideaId: f.ideaId }, `/v1/ideas/${f.ideaId}`),
    fixed('list_calendar', { projectId, ...month }, `/v1/calendar${qs({ projectId, ...month })}`),
    fixed('list_company_pages', { limit: 5 }, `/v1/company-pages${qs({ limit: 5 })}`),
    fixed('get_analytics_overview', { projectId, ...month }, `/v1/analytics/overview${qs({ projectId, ...month })}`),
    fixed('list_post_analytics', { projectId }, `/v1/analytics/posts${qs({ projectId })}`),
    fixed(
      'search_viral_posts',
      { query: 'hiring', projectId: f.networkProjectId, limit: 5 },
      `/v1/viral-posts${qs({ query: 'hiring', projectId: f.networkProjectId, limit: 5 })}`,
    ),
    fixed('get_cross_workspace_analytics', month, `/v1/analytics/cross-workspace/overview${qs(month)}`),
    fixed('list_media', {}, '/v1/media'),
    fixed('get_media', { mediaId: f.mediaId }, `/v1/media/${f.mediaId}`),
    fixed('get_knowledge_document', { documentId: f.knowledgeId }, `/v1/knowledge/${f.knowledgeId}`),
    {
      tool: 'search_knowledge_base',
      args: (i) => ({ query: QUERIES[i % 8]!, projectId }),
      rest: (i) => `/v1/knowledge${qs({ query: QUERIES[i % 8]!, projectId })}`,
    },
    fixed('list_posts_awaiting_review', { projectId }, `/v1/reviews/awaiting${qs({ projectId })}`),
  ];
}

interface Fixture {
  projectId: string;
  networkProjectId: string;
  postId: string;
  noteId: string;
  ideaId: string;
  sourceId: string;
  jobId: string;
  mediaId: string;
  knowledgeId: string;
}

/**
 * The bench's stores; one workspace with 200 posts, notes, ideas, a source, media rows and a
 * knowledge corpus of --chunks chunks; a project connected through the network simulator; the
 * API process with its MCP door answering.
 */
async function setUp() {
  console.log(`mcp bench: ${SESSIONS} sessions, ${DURATION_MS / 1000} s per round, kinds ${RUN_KINDS.join(', ')}`);
  await resetStores(DATABASE_URL, REDIS_URL);

  const { startNetworkSimulator } = await import('../sim/network/server');
  const sim = await startNetworkSimulator({ port: 0 });
  const { connectedPersonalProject } = await import('../sim/network/accounts');
  const { benchWorkspace } = await import('./harness/seed');
  const { storeDocumentsUpTo } = await import('./harness/knowledgeCorpus');
  const { db } = await import('../lib/db');
  const { newId } = await import('../lib/ids');
  const { TOOLS } = await import('../api/mcp/tools/index');
  const { workspace, project, key } = await benchWorkspace({
    name: 'Bench MCP',
    project: { name: 'Bench Person', username: 'bench-person', connection: 'connected' },
    scopes: ['read', 'write'],
  });
  const { project: networkProject } = await connectedPersonalProject(sim.control, workspace.id, {
    personId: 'benchviral',
    name: 'Bench Viral',
    expiresInSeconds: 30 * 86_400,
    projectName: 'Viral search',
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
  await db()('media_assets').insert(
    Array.from({ length: 30 }, (_, i) => ({
      id: newId('mediaAsset'),
      workspace_id: workspace.id,
      project_id: project.id,
      key: `${workspace.id}/media/bench-${i}.png`,
      sha256: i.toString(16).padStart(64, '0'),
      mime_type: 'image/png',
      bytes: 100_000 + i,
      width: 1200,
      height: 627,
      alt: `Bench image ${i}`,
      created_at: new Date(now - i * 60_000),
    })),
  );
  const t0 = performance.now();
  const chunks = await storeDocumentsUpTo(workspace.id, project.id, 0, Math.max(CHUNKS, 1), 20 * 1024);
  await db().raw('analyze knowledge_chunks');
  await db().raw('analyze knowledge_documents');
  console.log(`  knowledge corpus: ${chunks} chunks (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  const knowledgeId = (await db()('knowledge_documents').where({ workspace_id: workspace.id }).orderBy('id').first('id')).id as string;
  const jobId = (await db()('jobs').where({ workspace_id: workspace.id }).orderBy('id').first('id')).id as string;
  const mediaId = (await db()('media_assets').where({ workspace_id: workspace.id }).orderBy('id').first('id')).id as string;
  const readTools = TOOLS.filter((t) => t.annotations.readOnlyHint === true).map((t) => t.name);
  await closeStores();

  const [port, mcpPort] = [await freePort(), await freePort()];
  const apiUrl = `http://127.0.0.1:${port}`;
  const mcpUrl = `http://127.0.0.1:${mcpPort}`;
  if (opt.profile) fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
  const profileArgs = opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const server: ChildProcess = spawn(process.execPath, [...API_NODE_ARGS, ...profileArgs, '--import', 'tsx', 'api/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      MCP_PORT: String(mcpPort),
      PUBLIC_URL: apiUrl,
      MCP_PUBLIC_URL: mcpUrl,
      NETWORK_API_URL: sim.url,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (const deadline = Date.now() + 180_000; ;) {
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
    await sim.close();
    throw err;
  }

  // The rows whose create operation does its own work (a note's slot, an idea's status, a
  // source's insights) go through the REST door.
  const agent = new http.Agent({ keepAlive: true });
  const post = async (p: string, body: unknown) => {
    const r = await exchange(
      agent,
      new URL(apiUrl + p),
      'POST',
      { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      JSON.stringify(body),
    );
    if (r.status !== 200 && r.status !== 201) throw new Error(`POST ${p} answered ${r.status} ${r.body}`);
    return (JSON.parse(r.body) as { data: { id: string } }).data.id;
  };
  const created = { noteId: '', ideaId: '', sourceId: '' };
  for (let i = 0; i < 20; i++) {
    created.noteId = await post('/v1/notes', {
      projectId: project.id,
      content: `Bench note ${i}: a thought on hiring and product launches.`,
    });
    created.ideaId = await post('/v1/ideas', { projectId: project.id, title: `Bench idea ${i}`, hook: 'A hook that stops the scroll' });
  }
  created.sourceId = await post('/v1/sources', {
    projectId: project.id,
    type: 'text',
    text: 'A source on hiring: the team grew from five to fifty, and what we learned on the way.',
  });
  agent.destroy();

  const fixture: Fixture = {
    projectId: project.id,
    networkProjectId: networkProject.id,
    postId: posts[0]!.id,
    knowledgeId,
    jobId,
    mediaId,
    ...created,
  };
  const all = twins(fixture);
  // Every read tool of the catalogue that has a REST twin is driven (switch_workspace is the
  // only MCP-only tool, and it writes).
  const missing = readTools.filter((n) => !all.some((t) => t.tool === n));
  if (missing.length) throw new Error(`read tools without a row in bench/mcp.ts: ${missing.join(', ')}`);
  const wanted = opt.tools ? opt.tools.split(',').map((t) => t.trim()) : all.map((t) => t.tool);
  const unknown = wanted.filter((n) => !all.some((t) => t.tool === n));
  if (unknown.length) throw new Error(`--tools: not a read tool with a REST twin: ${unknown.join(', ')}`);
  const selected = all.filter((t) => wanted.includes(t.tool));
  const headers = { Authorization: `Bearer ${key}` };
  return { server, sim, apiUrl, mcpUrl, key, headers, selected };
}

async function openSdkSessions({ mcpUrl, headers }: Bench, kind: 'streamable' | 'sse') {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
  return Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(
        kind === 'streamable'
          ? new StreamableHTTPClientTransport(new URL('/mcp', mcpUrl), { requestInit: { headers } })
          : new SSEClientTransport(new URL('/sse', mcpUrl), { requestInit: { headers } }),
      );
      return client;
    }),
  );
}

/** One call of `twin` through one kind of client, for worker `w`; the `i`-th of its round. */
type Caller = (twin: Twin, w: number, i: number) => Promise<boolean>;
/** One call of `twin`, answered with whether it succeeded and the HTTP body (null: the SDK's client hides it). */
type Check = (twin: Twin) => Promise<{ ok: boolean; text: string | null }>;

/** The clients of every kind, opened once: REST keep-alive connections and MCP sessions. */
async function openClients(b: Bench): Promise<{ callers: Map<Kind, Caller>; check: Map<Kind, Check>; close: () => Promise<void> }> {
  const callers = new Map<Kind, Caller>();
  const check = new Map<Kind, Check>();
  const closers: Array<() => Promise<void>> = [];
  if (RUN_KINDS.includes('rest')) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: SESSIONS, maxFreeSockets: SESSIONS });
    const get = (twin: Twin, i: number) => exchange(agent, new URL(b.apiUrl + twin.rest(i)), 'GET', { authorization: `Bearer ${b.key}` });
    // The body is parsed, as the plain MCP client parses its answer (it has to, to see isError):
    // both clients do the same work per call, so the machine they share with the server is
    // loaded alike.
    callers.set('rest', async (twin, _w, i) => {
      const r = await get(twin, i);
      if (r.status !== 200) throw new Error(`${r.status} ${r.body.slice(0, 300)}`);
      return typeof JSON.parse(r.body) === 'object';
    });
    check.set('rest', async (twin) => {
      const r = await get(twin, 0);
      return { ok: r.status === 200, text: r.body };
    });
    closers.push(async () => agent.destroy());
  }
  if (RUN_KINDS.includes('plain')) {
    const sessions = Array.from({ length: SESSIONS }, () => new PlainSession(new URL('/mcp', b.mcpUrl), b.key));
    await Promise.all(sessions.map((x) => x.open()));
    callers.set('plain', async (twin, w, i) => {
      const r = await sessions[w]!.call(twin.tool, twin.args(i));
      if (!r.ok) throw new Error(r.text.slice(0, 300));
      return true;
    });
    check.set('plain', (twin) => sessions[0]!.call(twin.tool, twin.args(0)));
    closers.push(async () => void (await Promise.all(sessions.map((x) => x.close()))));
  }
  for (const kind of ['streamable', 'sse'] as const) {
    if (!RUN_KINDS.includes(kind)) continue;
    const clients = await openSdkSessions(b, kind);
    const call = (twin: Twin, w: number, i: number) => clients[w]!.callTool({ name: twin.tool, arguments: twin.args(i) });
    callers.set(kind, async (twin, w, i) => (await call(twin, w, i)).isError !== true);
    check.set(kind, async (twin) => {
      const r = await call(twin, 0, 0);
      return { ok: r.isError !== true, text: r.isError === true ? JSON.stringify(r.structuredContent ?? r.content) : null };
    });
    closers.push(async () => void (await Promise.all(clients.map((c) => c.close()))));
  }
  return { callers, check, close: async () => void (await Promise.all(closers.map((c) => c()))) };
}

/** Per tool: one answer checked through every kind, a warm-up of each, then the rounds, alternating. */
async function run(b: Bench): Promise<Round[]> {
  const clients = await openClients(b);
  const rounds: Round[] = [];
  try {
    for (const twin of b.selected) {
      const bytes: Partial<Record<Kind, number>> = {};
      for (const [kind, check] of clients.check) {
        const answer = await check(twin);
        if (!answer.ok) throw new Error(`${twin.tool} through ${kind} failed: ${answer.text?.slice(0, 500)}`);
        if (answer.text !== null) bytes[kind] = Buffer.byteLength(answer.text);
      }
      for (const kind of RUN_KINDS) await closedLoop(SESSIONS, WARMUP_MS, (w, i) => clients.callers.get(kind)!(twin, w, i), b.server.pid!);
      const mine: Round[] = [];
      // Short rounds that alternate (rest, plain, plain, rest, rest, plain, …): load that
      // changes during a tool's measurement falls on both doors alike.
      const order = Array.from({ length: ROUNDS }, (_, r) => (r % 2 === 0 ? RUN_KINDS : [...RUN_KINDS].reverse())).flat();
      for (const kind of order) {
        const result = await closedLoop(SESSIONS, DURATION_MS, (w, i) => clients.callers.get(kind)!(twin, w, i), b.server.pid!);
        mine.push({ tool: twin.tool, kind, ...result });
      }
      rounds.push(...mine);
      printTool(twin.tool, mine, bytes);
    }
  } finally {
    await clients.close();
  }
  return rounds;
}

function meanOf(rounds: Round[], tool: string, kind: Kind) {
  const rs = rounds.filter((r) => r.tool === tool && r.kind === kind);
  if (rs.length === 0) return null;
  const avg = (f: (r: Round) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
  return {
    tool,
    kind,
    callsPerSecond: avg((r) => r.callsPerSecond),
    p50Ms: avg((r) => r.latencyMs.p50),
    p99Ms: avg((r) => r.latencyMs.p99),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    serverCpuUsPerCall: rs.every((r) => r.serverCpuUsPerCall !== null) ? avg((r) => r.serverCpuUsPerCall!) : null,
    clientCpuUsPerCall: avg((r) => r.clientCpuUsPerCall),
  };
}

/**
 * The door's calls/s over its twin's: the median of the ratios of the rounds run side by side
 * (the k-th round of each kind are adjacent in time), so that a burst of load from elsewhere on
 * the machine, which lands on one round, moves one ratio rather than the figure.
 */
function pairedRatio(rounds: Round[], tool: string, kind: McpKind): number | null {
  const rest = rounds.filter((r) => r.tool === tool && r.kind === 'rest');
  const mcp = rounds.filter((r) => r.tool === tool && r.kind === kind);
  if (rest.length === 0 || rest.length !== mcp.length) return null;
  const ratios = mcp.map((m, k) => m.callsPerSecond / rest[k]!.callsPerSecond).sort((a, b) => a - b);
  const mid = ratios.length >> 1;
  return ratios.length % 2 ? ratios[mid]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
}

const label = (tool: string, kind: McpKind) => (kind === 'plain' ? `MCP ${tool}` : `MCP ${tool} (SDK ${kind})`);
const cpu = (us: number | null) => (us === null ? '?' : us.toFixed(0));

function printTool(tool: string, rounds: Round[], bytes: Partial<Record<Kind, number>>) {
  const rest = meanOf(rounds, tool, 'rest');
  for (const kind of MCP_KINDS) {
    const m = meanOf(rounds, tool, kind)!;
    const ratio = pairedRatio(rounds, tool, kind);
    const errors = m.errors + (rest?.errors ?? 0);
    const size = kind in bytes && 'rest' in bytes ? `; answer ${bytes[kind]} vs ${bytes.rest} bytes` : '';
    console.log(
      rest && ratio !== null
        ? `  ${label(tool, kind)} / REST twin: ${ratio.toFixed(2)}×  (${m.callsPerSecond.toFixed(0)} vs ${rest.callsPerSecond.toFixed(0)} calls/s; server CPU ${cpu(m.serverCpuUsPerCall)} vs ${cpu(rest.serverCpuUsPerCall)} µs/call${size}${errors ? `; errors ${errors}` : ''})`
        : `  ${label(tool, kind)}: ${m.callsPerSecond.toFixed(0)} calls/s, server CPU ${cpu(m.serverCpuUsPerCall)} µs/call`,
    );
  }
  if (MCP_KINDS.length === 0 && rest)
    console.log(`  REST twin of ${tool}: ${rest.callsPerSecond.toFixed(0)} calls/s, server CPU ${cpu(rest.serverCpuUsPerCall)} µs/call`);
}

async function report(rounds: Round[]) {
  const tools = [...new Set(rounds.map((r) => r.tool))];
  const rows = tools.map((tool) => {
    const rest = meanOf(rounds, tool, 'rest');
    const mcp = Object.fromEntries(
      MCP_KINDS.map((kind) => {
        const m = meanOf(rounds, tool, kind)!;
        return [kind, { ...m, ratio: pairedRatio(rounds, tool, kind) }];
      }),
    );
    return { tool, rest, mcp };
  });
  const w = Math.max(...tools.map((t) => t.length), 4);
  console.log(
    `\n  ${'tool'.padEnd(w)}   REST calls/s  µs/call  ${MCP_KINDS.map((k) => `${k.padStart(10)} calls/s  µs/call    ratio  CPU ratio`).join('  ')}`,
  );
  for (const r of rows) {
    console.log(
      `  ${r.tool.padEnd(w)} ${(r.rest?.callsPerSecond.toFixed(0) ?? '-').padStart(14)} ${(r.rest ? cpu(r.rest.serverCpuUsPerCall) : '-').padStart(8)}  ${MCP_KINDS.map(
        (k) => {
          const m = r.mcp[k]!;
          // REST's server CPU per call over the door's: the steadier figure on a loaded machine.
          const cpuRatio =
            r.rest?.serverCpuUsPerCall && m.serverCpuUsPerCall ? `${(r.rest.serverCpuUsPerCall / m.serverCpuUsPerCall).toFixed(2)}×` : '-';
          return `${m.callsPerSecond.toFixed(0).padStart(18)} ${cpu(m.serverCpuUsPerCall).padStart(8)} ${(m.ratio === null ? '-' : `${m.ratio.toFixed(2)}×`).padStart(8)} ${cpuRatio.padStart(10)}`;
        },
      ).join('  ')}`,
    );
  }
  const plainRatios = rows.flatMap((r) => (r.mcp.plain?.ratio != null ? [{ tool: r.tool, ratio: r.mcp.plain.ratio }] : []));
  const target = plainRatios.length
    ? {
        min: TARGET_RATIO,
        lowest: plainRatios.reduce((a, b) => (b.ratio < a.ratio ? b : a)),
        missed: plainRatios.filter((r) => r.ratio < TARGET_RATIO).map((r) => r.tool),
      }
    : null;
  if (target) {
    console.log(
      `\n  every read tool ≥ ${TARGET_RATIO}× its REST twin (plain client): ${target.missed.length === 0 ? 'met' : `MISSED by ${target.missed.join(', ')}`}; lowest ${target.lowest.tool} ${target.lowest.ratio.toFixed(2)}×`,
    );
    console.log(
      `  (load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}: the machine is shared, read the ratios, not the rates)`,
    );
    if (opt.strict && target.missed.length) exitCode = 1;
  }
  const out = {
    bench: 'mcp',
    target,
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadavg: os.loadavg() },
    options: { sessions: SESSIONS, durationS: DURATION_MS / 1000, warmupS: WARMUP_MS / 1000, kinds: RUN_KINDS, chunks: CHUNKS },
    tools: rows,
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
