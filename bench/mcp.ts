// Bench: every read tool of the MCP door (spec 4.9) against its REST twin's GET, in alternating
// closed-loop rounds of concurrent sessions and keep-alive connections on one API process
// (api/main.ts, REST and MCP), over one seeded workspace. See docs/mcp.md "Benchmark" and bench/README.md.

import { apiAnswers, launch } from '../tooling/launcher';
import fs from 'node:fs';
import http from 'node:http';
import { closeStores, resetStores } from './harness/database';
import { QUERIES } from './harness/knowledgeCorpus';
import { requestText as exchange } from './harness/load';
import { freePort } from '../tooling/ports';
import { printTool, report } from './mcp/report';
import { closedLoop, openSdkSessions, PlainSession } from './mcp/clients';
import type { Round } from './mcp/clients';
import { DATABASE_URL, REDIS_URL, opt, DURATION_MS, WARMUP_MS, RUN_KINDS, PROFILE_DIR, type Kind } from './mcp/settings';

async function main() {
  const bench = await setUp();
  let rounds: Round[];
  try {
    rounds = await run(bench);
  } finally {
    await bench.server.stop();
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

/** The read tools with their twins (the pairs of test/mcp/parity.test.ts), over the seeded workspace. */
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

type Fixture = Record<
  'projectId' | 'networkProjectId' | 'postId' | 'noteId' | 'ideaId' | 'sourceId' | 'jobId' | 'mediaId' | 'knowledgeId',
  string
>;

/** The stores, the seeded workspace (posts, notes, ideas, a source, media, a corpus), the API process. */
async function setUp() {
  console.log(`mcp bench: ${opt.sessions} sessions, ${DURATION_MS / 1000} s per round, kinds ${RUN_KINDS.join(', ')}`);
  await resetStores(DATABASE_URL, REDIS_URL);

  const { startNetworkSimulator } = await import('../sim/network/server');
  const sim = await startNetworkSimulator({ port: 0 });
  const { connectedPersonalProject } = await import('../admin/simulatedAccounts');
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
  // The rows whose create operation does its own work (a note's slot, an idea's status, a
  // source's insights) go through the operations, as the REST door runs them.
  const { operate } = await import('../admin/asOperator');
  const { createNote } = await import('../api/operations/notes/notes');
  const { createIdea } = await import('../api/operations/ideas/ideas');
  const { createSource } = await import('../api/operations/sources/sources');
  const create = async (op: Parameters<typeof operate>[1], input: Record<string, unknown>) =>
    (await operate<{ id: string }>(workspace.id, op, { projectId: project.id, ...input })).id;
  const created = { noteId: '', ideaId: '', sourceId: '' };
  for (let i = 0; i < 20; i++) {
    created.noteId = await create(createNote, { content: `Bench note ${i}: a thought on hiring and product launches.` });
    created.ideaId = await create(createIdea, { title: `Bench idea ${i}`, hook: 'A hook that stops the scroll' });
  }
  const text = 'A source on hiring: the team grew from five to fifty, and what we learned on the way.';
  created.sourceId = await create(createSource, { type: 'text', text });
  const t0 = performance.now();
  const chunks = await storeDocumentsUpTo(workspace.id, project.id, 0, Math.max(opt.chunks, 1), 20 * 1024);
  await db().raw('analyze knowledge_chunks');
  await db().raw('analyze knowledge_documents');
  console.log(`  knowledge corpus: ${chunks} chunks (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  const first = async (table: string) => (await db()(table).where({ workspace_id: workspace.id }).orderBy('id').first('id')).id as string;
  const [knowledgeId, jobId, mediaId] = [await first('knowledge_documents'), await first('jobs'), await first('media_assets')];
  const readTools = TOOLS.filter((t) => t.annotations.readOnlyHint === true).map((t) => t.name);
  await closeStores();

  const [port, mcpPort] = [await freePort(), await freePort()];
  const apiUrl = `http://127.0.0.1:${port}`;
  const mcpUrl = `http://127.0.0.1:${mcpPort}`;
  if (opt.profile) fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
  const server = await launch({
    kind: 'api',
    env: { PORT: String(port), MCP_PORT: String(mcpPort), PUBLIC_URL: apiUrl, MCP_PUBLIC_URL: mcpUrl, NETWORK_API_URL: sim.url },
    nodeArgs: opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [],
    ready: apiAnswers(port, mcpPort),
    readyTimeoutMs: 180_000,
    onLine: (line, stream) => stream === 'stderr' && process.stderr.write(`${line}\n`),
  }).catch(async (err) => {
    await sim.close();
    throw err;
  });

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
  return { server, sim, apiUrl, mcpUrl, key, selected };
}

/** One call of `twin` for worker `w`, the `i`-th of its round: whether it succeeded, and the HTTP body (null: the SDK client hides it). */
type Call = (twin: Twin, w: number, i: number) => Promise<{ ok: boolean; text: string | null }>;

/** The clients of every kind, opened once: REST keep-alive connections and MCP sessions. */
async function openClients(b: Bench): Promise<{ calls: Map<Kind, Call>; close: () => Promise<void> }> {
  const calls = new Map<Kind, Call>();
  const closers: Array<() => Promise<void>> = [];
  if (RUN_KINDS.includes('rest')) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: opt.sessions, maxFreeSockets: opt.sessions });
    // The body is parsed, as the plain MCP client parses its answer (it has to, to see isError):
    // both clients do the same work per call, so the machine they share with the server is
    // loaded alike.
    calls.set('rest', async (twin, _w, i) => {
      const r = await exchange(agent, new URL(b.apiUrl + twin.rest(i)), 'GET', { authorization: `Bearer ${b.key}` });
      return { ok: r.status === 200 && typeof JSON.parse(r.body) === 'object', text: r.status === 200 ? r.body : `${r.status} ${r.body}` };
    });
    closers.push(async () => agent.destroy());
  }
  if (RUN_KINDS.includes('plain')) {
    const sessions = Array.from({ length: opt.sessions }, () => new PlainSession(new URL('/mcp', b.mcpUrl), b.key));
    await Promise.all(sessions.map((x) => x.open()));
    calls.set('plain', (twin, w, i) => sessions[w]!.call(twin.tool, twin.args(i)));
    closers.push(async () => void (await Promise.all(sessions.map((x) => x.close()))));
  }
  for (const kind of ['streamable', 'sse'] as const) {
    if (!RUN_KINDS.includes(kind)) continue;
    const clients = (await openSdkSessions(b.mcpUrl, { Authorization: `Bearer ${b.key}` }, opt.sessions, kind)).map((x) => x.client);
    calls.set(kind, async (twin, w, i) => {
      const r = await clients[w]!.callTool({ name: twin.tool, arguments: twin.args(i) });
      return { ok: r.isError !== true, text: r.isError === true ? JSON.stringify(r.structuredContent ?? r.content) : null };
    });
    closers.push(async () => void (await Promise.all(clients.map((c) => c.close()))));
  }
  return { calls, close: async () => void (await Promise.all(closers.map((c) => c()))) };
}

/** Per tool: one answer checked through every kind, a warm-up of each, then the rounds, alternating. */
async function run(b: Bench): Promise<Round[]> {
  const clients = await openClients(b);
  const rounds: Round[] = [];
  try {
    for (const twin of b.selected) {
      const bytes: Partial<Record<Kind, number>> = {};
      for (const [kind, call] of clients.calls) {
        const answer = await call(twin, 0, 0);
        if (!answer.ok) throw new Error(`${twin.tool} through ${kind} failed: ${answer.text?.slice(0, 500)}`);
        if (answer.text !== null) bytes[kind] = Buffer.byteLength(answer.text);
      }
      const loop = (kind: Kind, ms: number) =>
        closedLoop(
          opt.sessions,
          ms,
          async (w, i) => {
            const r = await clients.calls.get(kind)!(twin, w, i);
            if (!r.ok) throw new Error(r.text?.slice(0, 300));
            return true;
          },
          b.server.pid,
        );
      for (const kind of RUN_KINDS) await loop(kind, WARMUP_MS);
      const mine: Round[] = [];
      // Short rounds that alternate (rest, plain, plain, rest, rest, plain, …): load that
      // changes during a tool's measurement falls on both doors alike.
      const order = Array.from({ length: opt.rounds }, (_, r) => (r % 2 === 0 ? RUN_KINDS : [...RUN_KINDS].reverse())).flat();
      for (const kind of order) {
        mine.push({ tool: twin.tool, kind, ...(await loop(kind, DURATION_MS)) });
      }
      rounds.push(...mine);
      printTool(twin.tool, mine, bytes);
    }
  } finally {
    await clients.close();
  }
  return rounds;
}

main().then(
  () => process.exit(process.exitCode),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
