// Bench: every read tool of the MCP door (spec 4.9) against its REST twin's GET, in alternating
// closed-loop rounds on one API process (docs/mcp.md "Benchmark", bench/README.md).

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { newId } from '../lib/ids';
import { apiAnswers, launch } from '../tooling/launcher';
import { freePort } from '../tooling/ports';
import { closeStores, resetStores, setBenchEnvironment } from './harness/database';
import { loadAverage, mean, REPO_ROOT, RESULTS_DIR, writeResults } from './harness/format';
import { growCorpus, QUERIES } from './harness/knowledgeCorpus';
import { closedLoopCalls, requestText } from './harness/load';
import { benchFlags } from './harness/options';
import { cpuSeconds, machineInfo } from './harness/proc';
import { openPlainSession, openSdkSessions } from './mcp/clients';

const DATABASE_URL = process.env.BENCH_MCP_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_mcp';
const REDIS_URL = process.env.BENCH_MCP_REDIS_URL ?? 'redis://127.0.0.1:6379/12';
const KINDS = ['rest', 'plain', 'streamable', 'sse'] as const;
type Kind = (typeof KINDS)[number];

const opt = benchFlags(
  'mcp: every read tool with a REST twin, MCP sessions against REST connections, interleaved.',
  {
    sessions: { default: 16, min: 1, integer: true, help: 'concurrent sessions (and REST connections)' },
    duration: { default: 1, min: 0.5, arg: 'S', help: 'seconds per measured round' },
    rounds: { default: 6, min: 1, integer: true, help: 'measured rounds per kind and tool, alternating' },
    warmup: { default: 1, arg: 'S', help: 'seconds of warm-up per kind and tool before its measured rounds' },
    tools: { type: 'string', arg: 'A,B', help: 'the tools to drive (default: every read tool with a REST twin)' },
    kinds: { default: 'rest,plain', arg: 'K,…', help: 'rest, plain, streamable, sse (default rest,plain); the ratio needs rest' },
    chunks: { default: 10000, integer: true, help: 'chunks in the knowledge corpus the search runs over' },
    strict: { type: 'boolean', help: "exit 1 when a tool's plain MCP calls/s miss 0.8× its REST twin's" },
    profile: { type: 'boolean', help: "the server's CPU profile over the whole run (narrow it with --tools and --kinds), summarized" },
  },
  `Environment: BENCH_MCP_DATABASE_URL (default ${DATABASE_URL}, dropped and recreated),
             BENCH_MCP_REDIS_URL (default ${REDIS_URL}, flushed).`,
);
const RUN_KINDS = opt.kinds.split(',').map((k) => k.trim()) as Kind[];
for (const k of RUN_KINDS) if (!KINDS.includes(k)) throw new Error(`--kinds: ${k} is not one of ${KINDS.join(', ')}`);
const MCP_KINDS = RUN_KINDS.filter((k) => k !== 'rest');
const TARGET_RATIO = 0.8; // a tool's plain MCP calls/s against its REST twin's
const PROFILE_DIR = path.join(RESULTS_DIR, 'profiles', 'mcp');
setBenchEnvironment(DATABASE_URL, REDIS_URL, { LOG_LEVEL: 'error', LLM_WRITER: 'builtin' });

/** A read tool and its REST twin's GET, for the `i`-th call (the search rotates its queries). */
type Twin = { tool: string; args: (i: number) => Record<string, unknown>; rest: (i: number) => string };
type Bench = Awaited<ReturnType<typeof setUp>>;
const qs = (params: Record<string, string | number>) => `?${new URLSearchParams(params as Record<string, string>)}`;

/** The stores, the seeded workspace (posts, notes, ideas, a source, media, a corpus), the API process, the tools to drive. */
async function setUp() {
  console.log(`mcp bench: ${opt.sessions} sessions, ${opt.duration} s per round, kinds ${RUN_KINDS.join(', ')}`);
  await resetStores(DATABASE_URL, REDIS_URL);
  const { startNetworkSimulator } = await import('../sim/network/server');
  const sim = await startNetworkSimulator({ port: 0 });
  const { connectedPersonalProject } = await import('../admin/simulatedAccounts');
  const { benchWorkspace } = await import('./harness/seed');
  const { db } = await import('../lib/db');
  const { TOOLS } = await import('../api/mcp/tools/index');
  const person = { name: 'Bench Person', username: 'bench-person', connection: 'connected' } as const;
  const { workspace, project, key } = await benchWorkspace({ name: 'Bench MCP', project: person, scopes: ['read', 'write'] });
  const viralPerson = { personId: 'benchviral', name: 'Bench Viral', expiresInSeconds: 30 * 86_400, projectName: 'Viral search' };
  const { project: networkProject } = await connectedPersonalProject(sim.control, workspace.id, viralPerson);
  const projectId = project.id as string;
  // Posts, notes, ideas and a source as the service makes them (admin/seed.ts, admin/ideas.ts, the create operation).
  const { seedNotes, seedPosts } = await import('../admin/seed');
  const { createIdeaAsOperator } = await import('../admin/ideas');
  const { operate } = await import('../admin/asOperator');
  const { createSource } = await import('../api/operations/sources/sources');
  const content = 'Line one of a post.\n\nA paragraph of body text that reads like a real post, with a #hashtag and an emoji 🚀.'.repeat(3);
  await seedPosts({ workspaceId: workspace.id, projectId, count: 200, content, title: 'Post', spacingMinutes: 0 });
  await seedNotes({ workspaceId: workspace.id, projectId, count: 20, spacingMinutes: 0 });
  for (let i = 0; i < 20; i++) await createIdeaAsOperator({ projectId, title: `Bench idea ${i}`, hook: 'A hook that stops the scroll' });
  const text = 'A source on hiring: the team grew from five to fifty, and what we learned on the way.';
  await operate(workspace.id, createSource, { projectId, type: 'text', text });
  await db()('media_assets').insert(
    Array.from({ length: 30 }, (_, i) => ({
      id: newId('mediaAsset'),
      workspace_id: workspace.id,
      project_id: projectId,
      key: `${workspace.id}/media/bench-${i}.png`,
      sha256: i.toString(16).padStart(64, '0'),
      mime_type: 'image/png',
      bytes: 100_000 + i,
      width: 1200,
      height: 627,
      alt: `Bench image ${i}`,
      created_at: new Date(Date.now() - i * 60_000),
    })),
  );
  const t0 = performance.now();
  const chunks = await growCorpus(workspace.id, projectId, 0, Math.max(opt.chunks, 1), 20 * 1024);
  console.log(`  knowledge corpus: ${chunks} chunks (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  const first = async (table: string) => (await db()(table).where({ workspace_id: workspace.id }).orderBy('id').first('id')).id as string;
  const [postId, noteId, ideaId, sourceId, jobId, mediaId, knowledgeId] = await Promise.all(
    ['posts', 'notes', 'ideas', 'sources', 'jobs', 'media_assets', 'knowledge_documents'].map(first),
  );
  const readTools = TOOLS.filter((t) => t.annotations.readOnlyHint === true).map((t) => t.name);
  await closeStores();

  // The read tools with their twins (the pairs of test/mcp/parity.test.ts), over the seeded workspace.
  const month = { from: '2031-01-01', to: '2031-01-31' };
  const viral = { query: 'hiring', projectId: networkProject.id as string, limit: 5 };
  const search = (i: number) => ({ query: QUERIES[i % 8]!, projectId });
  const fixed = (tool: string, args: Record<string, unknown>, rest: string): Twin => ({ tool, args: () => args, rest: () => rest });
  const all: Twin[] = [
    fixed('get_workspace', {}, '/v1/workspaces/me'),
    fixed('list_workspaces', {}, '/v1/workspaces'),
    fixed('get_workspace_context', {}, '/v1/workspaces/context'),
    fixed('list_team', {}, '/v1/team'),
    fixed('get_usage', {}, '/v1/usage'),
    fixed('list_projects', {}, '/v1/projects'),
    fixed('get_project', { projectId }, `/v1/projects/${projectId}`),
    fixed('list_notes', { projectId }, `/v1/notes${qs({ projectId })}`),
    fixed('get_note', { noteId }, `/v1/notes/${noteId}`),
    fixed('list_posts', { projectId, limit: 20 }, `/v1/posts${qs({ projectId, limit: 20 })}`),
    fixed('get_post', { postId }, `/v1/posts/${postId}`),
    fixed('list_post_statuses', {}, '/v1/post-statuses'),
    fixed('get_source', { sourceId }, `/v1/sources/${sourceId}`),
    fixed('list_jobs', {}, '/v1/jobs'),
    fixed('get_job', { jobId }, `/v1/jobs/${jobId}`),
    fixed('list_ideas', { projectId }, `/v1/ideas${qs({ projectId })}`),
    fixed('get_idea', { ideaId }, `/v1/ideas/${ideaId}`),
    fixed('list_calendar', { projectId, ...month }, `/v1/calendar${qs({ projectId, ...month })}`),
    fixed('list_company_pages', { limit: 5 }, `/v1/company-pages${qs({ limit: 5 })}`),
    fixed('get_analytics_overview', { projectId, ...month }, `/v1/analytics/overview${qs({ projectId, ...month })}`),
    fixed('list_post_analytics', { projectId }, `/v1/analytics/posts${qs({ projectId })}`),
    fixed('search_viral_posts', viral, `/v1/viral-posts${qs(viral)}`),
    fixed('get_cross_workspace_analytics', month, `/v1/analytics/cross-workspace/overview${qs(month)}`),
    fixed('list_media', {}, '/v1/media'),
    fixed('get_media', { mediaId }, `/v1/media/${mediaId}`),
    fixed('get_knowledge_document', { documentId: knowledgeId }, `/v1/knowledge/${knowledgeId}`),
    { tool: 'search_knowledge_base', args: search, rest: (i) => `/v1/knowledge${qs(search(i))}` },
    fixed('list_posts_awaiting_review', { projectId }, `/v1/reviews/awaiting${qs({ projectId })}`),
  ];
  // Every read tool of the catalogue with a REST twin is driven (switch_workspace, MCP-only, writes).
  const missing = readTools.filter((n) => !all.some((t) => t.tool === n));
  if (missing.length) throw new Error(`read tools without a row in bench/mcp.ts: ${missing.join(', ')}`);
  const wanted = opt.tools ? opt.tools.split(',').map((t) => t.trim()) : all.map((t) => t.tool);
  const unknown = wanted.filter((n) => !all.some((t) => t.tool === n));
  if (unknown.length) throw new Error(`--tools: not a read tool with a REST twin: ${unknown.join(', ')}`);

  const [port, mcpPort] = [await freePort(), await freePort()];
  const [apiUrl, mcpUrl] = [`http://127.0.0.1:${port}`, `http://127.0.0.1:${mcpPort}`];
  if (opt.profile) fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
  const server = await launch({
    kind: 'api',
    env: { PORT: String(port), MCP_PORT: String(mcpPort), PUBLIC_URL: apiUrl, MCP_PUBLIC_URL: mcpUrl, NETWORK_API_URL: sim.url },
    nodeArgs: opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [],
    ready: apiAnswers(port, mcpPort),
    readyTimeoutMs: 180_000,
    onLine: (line, stream) => stream === 'stderr' && process.stderr.write(`${line}\n`),
  });
  return { server, sim, apiUrl, mcpUrl, key, selected: all.filter((t) => wanted.includes(t.tool)) };
}

/** One call of `twin` by worker `w`, the `i`-th of its round: whether it succeeded, and the HTTP body (null: the SDK hides it). */
type Call = (twin: Twin, w: number, i: number) => Promise<{ ok: boolean; text: string | null }>;

/** The clients of `kind`, opened once: REST keep-alive connections, or MCP sessions. */
async function openClients(kind: Kind, { apiUrl, mcpUrl, key }: Bench): Promise<{ call: Call; close: () => Promise<unknown> }> {
  if (kind === 'rest') {
    const agent = new http.Agent({ keepAlive: true, maxSockets: opt.sessions, maxFreeSockets: opt.sessions });
    // The body parsed, as the plain MCP client parses its answer: both clients do the same work.
    const call: Call = async (twin, _w, i) => {
      const r = await requestText(agent, new URL(apiUrl + twin.rest(i)), 'GET', { authorization: `Bearer ${key}` });
      return { ok: r.status === 200 && typeof JSON.parse(r.body) === 'object', text: r.status === 200 ? r.body : `${r.status} ${r.body}` };
    };
    return { call, close: async () => agent.destroy() };
  }
  if (kind === 'plain') {
    const sessions = await Promise.all(Array.from({ length: opt.sessions }, () => openPlainSession(new URL('/mcp', mcpUrl), key)));
    return { call: (twin, w, i) => sessions[w]!.call(twin.tool, twin.args(i)), close: () => Promise.all(sessions.map((s) => s.close())) };
  }
  const clients = (await openSdkSessions(mcpUrl, key, opt.sessions, kind)).map((x) => x.client);
  const call: Call = async (twin, w, i) => {
    const r = await clients[w]!.callTool({ name: twin.tool, arguments: twin.args(i) });
    return { ok: r.isError !== true, text: r.isError === true ? JSON.stringify(r.structuredContent ?? r.content) : null };
  };
  return { call, close: () => Promise.all(clients.map((c) => c.close())) };
}

type Round = { tool: string; kind: Kind } & Awaited<ReturnType<typeof round>>;

/**
 * A round of `kind`: calls/s counts the calls answered within the window (a round's drain does
 * not weigh on the slower door); CPU per call is over the whole round and every answered call.
 */
async function round(call: Call, twin: Twin, serverPid: number, ms: number) {
  const once = async (i: number, w: number) => {
    const x = await call(twin, w, i);
    if (!x.ok) throw new Error(x.text?.slice(0, 300));
  };
  const [cpu0, own0] = [cpuSeconds(serverPid), process.cpuUsage()];
  const r = await closedLoopCalls(once, { connections: opt.sessions, durationMs: ms, tolerate: true });
  const [cpu1, own] = [cpuSeconds(serverPid), process.cpuUsage(own0)];
  return {
    ...r,
    callsPerSecond: r.inWindow / (ms / 1000),
    serverCpuUsPerCall: cpu0 !== null && cpu1 !== null && r.calls ? ((cpu1 - cpu0) * 1e6) / r.calls : null,
    clientCpuUsPerCall: r.calls ? (own.user + own.system) / r.calls : 0,
  };
}

/** Per tool: one answer checked through every kind, a warm-up of each, then the rounds, alternating. */
async function run(b: Bench) {
  const clients = new Map<Kind, Awaited<ReturnType<typeof openClients>>>();
  for (const kind of RUN_KINDS) clients.set(kind, await openClients(kind, b));
  const rounds: Round[] = [];
  try {
    for (const twin of b.selected) {
      const bytes: Partial<Record<Kind, number>> = {};
      for (const [kind, { call }] of clients) {
        const answer = await call(twin, 0, 0);
        if (!answer.ok) throw new Error(`${twin.tool} through ${kind} failed: ${answer.text?.slice(0, 500)}`);
        if (answer.text !== null) bytes[kind] = Buffer.byteLength(answer.text);
      }
      const measure = (kind: Kind, ms: number) => round(clients.get(kind)!.call, twin, b.server.pid, ms);
      for (const kind of RUN_KINDS) await measure(kind, opt.warmup * 1000);
      // Short rounds that alternate (rest, plain, plain, rest, …): load changing meanwhile falls on both doors.
      const order = Array.from({ length: opt.rounds }, (_, r) => (r % 2 === 0 ? RUN_KINDS : [...RUN_KINDS].reverse())).flat();
      for (const kind of order) rounds.push({ tool: twin.tool, kind, ...(await measure(kind, opt.duration * 1000)) });
      printTool(toolRow(rounds, twin.tool), bytes);
    }
  } finally {
    await Promise.all([...clients.values()].map((c) => c.close()));
  }
  return rounds;
}

/** The median of the ratios of the rounds run side by side: a burst from elsewhere moves one ratio, not the figure. */
function pairedRatio(rounds: Round[], kind: Kind): number | null {
  const rest = rounds.filter((r) => r.kind === 'rest');
  const mcp = rounds.filter((r) => r.kind === kind);
  if (rest.length === 0 || rest.length !== mcp.length) return null;
  const ratios = mcp.map((m, k) => m.callsPerSecond / rest[k]!.callsPerSecond).sort((a, b) => a - b);
  const mid = ratios.length >> 1;
  return ratios.length % 2 ? ratios[mid]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
}

/** A tool's rounds averaged per kind, each MCP kind with its paired ratio to REST. */
function toolRow(all: Round[], tool: string) {
  const rounds = all.filter((r) => r.tool === tool);
  const meanOf = (kind: Kind) => {
    const rs = rounds.filter((r) => r.kind === kind);
    const avg = (f: (r: Round) => number) => mean(rs.map(f));
    if (rs.length === 0) return null;
    return {
      callsPerSecond: avg((r) => r.callsPerSecond),
      p50Ms: avg((r) => r.latencyMs.p50),
      p99Ms: avg((r) => r.latencyMs.p99),
      errors: rs.reduce((a, r) => a + r.errors, 0),
      serverCpuUsPerCall: rs.every((r) => r.serverCpuUsPerCall !== null) ? avg((r) => r.serverCpuUsPerCall!) : null,
      clientCpuUsPerCall: avg((r) => r.clientCpuUsPerCall),
    };
  };
  const mcp = Object.fromEntries(MCP_KINDS.map((kind) => [kind, { ...meanOf(kind)!, ratio: pairedRatio(rounds, kind) }]));
  return { tool, rest: meanOf('rest'), mcp };
}

const label = (tool: string, kind: Kind) => (kind === 'plain' ? `MCP ${tool}` : `MCP ${tool} (SDK ${kind})`);
const cpu = (us: number | null) => (us === null ? '?' : us.toFixed(0));
const times = (x: number | null) => (x === null ? '-' : `${x.toFixed(2)}×`);

function printTool({ tool, rest, mcp }: ReturnType<typeof toolRow>, bytes: Partial<Record<Kind, number>>) {
  for (const kind of MCP_KINDS) {
    const m = mcp[kind]!;
    const errors = m.errors + (rest?.errors ?? 0);
    const size = kind in bytes && 'rest' in bytes ? `; answer ${bytes[kind]} vs ${bytes.rest} bytes` : '';
    console.log(
      rest && m.ratio !== null
        ? `  ${label(tool, kind)} / REST twin: ${m.ratio.toFixed(2)}×  (${m.callsPerSecond.toFixed(0)} vs ${rest.callsPerSecond.toFixed(0)} calls/s; server CPU ${cpu(m.serverCpuUsPerCall)} vs ${cpu(rest.serverCpuUsPerCall)} µs/call${size}${errors ? `; errors ${errors}` : ''})`
        : `  ${label(tool, kind)}: ${m.callsPerSecond.toFixed(0)} calls/s, server CPU ${cpu(m.serverCpuUsPerCall)} µs/call`,
    );
  }
  if (MCP_KINDS.length === 0 && rest)
    console.log(`  REST twin of ${tool}: ${rest.callsPerSecond.toFixed(0)} calls/s, server CPU ${cpu(rest.serverCpuUsPerCall)} µs/call`);
}

async function report(rounds: Round[]) {
  const rows = [...new Set(rounds.map((r) => r.tool))].map((tool) => toolRow(rounds, tool));
  const w = Math.max(...rows.map((r) => r.tool.length), 4);
  const head = MCP_KINDS.map((k) => `${k.padStart(10)} calls/s  µs/call    ratio  CPU ratio`).join('  ');
  console.log(`\n  ${'tool'.padEnd(w)}   REST calls/s  µs/call  ${head}`);
  for (const { tool, rest, mcp } of rows) {
    const cells = MCP_KINDS.map((k) => {
      const m = mcp[k]!;
      // REST's server CPU per call over the door's: the steadier figure on a loaded machine.
      const cpuRatio = rest?.serverCpuUsPerCall && m.serverCpuUsPerCall ? rest.serverCpuUsPerCall / m.serverCpuUsPerCall : null;
      return `${m.callsPerSecond.toFixed(0).padStart(18)} ${cpu(m.serverCpuUsPerCall).padStart(8)} ${times(m.ratio).padStart(8)} ${times(cpuRatio).padStart(10)}`;
    });
    const restCells = `${(rest?.callsPerSecond.toFixed(0) ?? '-').padStart(14)} ${(rest ? cpu(rest.serverCpuUsPerCall) : '-').padStart(8)}`;
    console.log(`  ${tool.padEnd(w)} ${restCells}  ${cells.join('  ')}`);
  }
  const plain = rows.flatMap((r) => (r.mcp.plain?.ratio != null ? [{ tool: r.tool, ratio: r.mcp.plain.ratio }] : []));
  const lowest = plain.length ? plain.reduce((a, b) => (b.ratio < a.ratio ? b : a)) : null;
  const missed = plain.filter((r) => r.ratio < TARGET_RATIO).map((r) => r.tool);
  if (lowest) {
    const met = missed.length === 0 ? 'met' : `MISSED by ${missed.join(', ')}`;
    const low = `lowest ${lowest.tool} ${lowest.ratio.toFixed(2)}×`;
    console.log(`\n  every read tool ≥ ${TARGET_RATIO}× its REST twin (plain client): ${met}; ${low}`);
    console.log(`  (load average ${loadAverage(1)}: the machine is shared, read the ratios, not the rates)`);
    if (opt.strict && missed.length) process.exitCode = 1;
  }
  writeResults('mcp', {
    bench: 'mcp',
    target: lowest && { min: TARGET_RATIO, lowest, missed },
    at: new Date().toISOString(),
    machine: { ...machineInfo(), loadavg: os.loadavg() },
    options: { sessions: opt.sessions, durationS: opt.duration, warmupS: opt.warmup, kinds: RUN_KINDS, chunks: opt.chunks },
    tools: rows,
    rounds,
  });
  console.log('\n  written to bench/results/mcp.json');
  if (opt.profile) {
    const { printProfile, summarizeProfile } = await import('./harness/profile');
    for (const f of fs.readdirSync(PROFILE_DIR).filter((x) => x.endsWith('.cpuprofile')))
      printProfile('server', summarizeProfile(path.join(PROFILE_DIR, f), REPO_ROOT, 25));
  }
}

const bench = await setUp();
const rounds = await run(bench).finally(() => Promise.all([bench.server.stop(), bench.sim.close()]));
await report(rounds);
process.exit(process.exitCode);
