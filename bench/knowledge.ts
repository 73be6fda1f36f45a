// Bench: the knowledge base (docs/knowledge.md "Performance"): ingest throughput and job latency,
// then search at each corpus size through REST and the MCP tool beside its baselines
// (bench/harness/statements.ts; bench/README.md, "Read surfaces").

import os from 'node:os';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { apiClient } from '../client';
import { launch, workerPolls } from '../tooling/launcher';
import { closeStores, resetStores, setPublishingEnvironment } from './harness/database';
import { loadAverage, step } from './harness/format';
import { chunksOf, documentText, growCorpus, QUERIES } from './harness/knowledgeCorpus';
import { closedLoop, closedLoopCalls, summarize, type LatencySummary } from './harness/load';
import { benchFlags } from './harness/options';
import { until } from './harness/proc';
import { startServer, type ServerHandle } from './harness/servers';
import { captureStatements, describeStatements, explainAll, measureSurface, type CaptureRequest } from './harness/statements';
import { reserveTemporal, startBenchTemporal } from './harness/temporal';
import { openSdkSessions } from './mcp/clients';

const opt = benchFlags('knowledge: ingest throughput and job latency, then search over a chunk corpus beside bare SQL.', {
  documents: { default: 200, integer: true, help: 'documents ingested at once (default 200); 0 skips the ingest phase' },
  bytes: { default: 20 * 1024, min: 1, integer: true, help: 'size of each document' },
  chunks: { default: '10000,100000', arg: 'N,M', help: 'corpus sizes (chunks in the workspace) of the search phase, in turn' },
  explain: { type: 'boolean', help: "EXPLAIN (ANALYZE, BUFFERS) of the service's statements and of the minimal query at each size" },
  connections: { default: 8, min: 1, integer: true, help: 'concurrent searchers' },
  duration: { default: 15, arg: 'S', help: 'seconds per search run' },
});
const DURATION_MS = opt.duration * 1000;
const DATABASE_URL = process.env.BENCH_KB_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_knowledge';
const REDIS_URL = process.env.BENCH_KB_REDIS_URL ?? 'redis://127.0.0.1:6379/10';
const TASK_QUEUE = 'bench-knowledge';
const SEARCH_TOOL = 'search_knowledge_base';
const reserved = await reserveTemporal('dev');
setPublishingEnvironment(
  { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL, temporalPort: reserved.port, taskQueue: TASK_QUEUE, simPort: 9 },
  // Built-in writer and insight extractor: no LLM runs beside the bench.
  { YOUTUBE_TRANSCRIPT_URL: 'http://127.0.0.1:9', LLM_WRITER: 'builtin' },
);
const [{ db }, { benchWorkspace }] = await Promise.all([import('../lib/db'), import('./harness/seed')]);
const { config } = await import('../lib/config');

const fmt = (l: LatencySummary) => `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, max ${l.max.toFixed(1)} ms`;
// The minimal query for the API's page without a limit: rank the chunks, group by document, headline only the page's rows.
const MINIMAL_SQL = `with q as materialized (select websearch_to_tsquery('english', $2) as q),
         page as (
           select c.document_id, max(ts_rank_cd(c.tsv, q.q)) as rank
             from knowledge_chunks c, q
            where c.workspace_id = $1 and c.tsv @@ q.q
            group by c.document_id
            order by rank desc, c.document_id desc
            limit ${config.knowledge.listDefault + 1})
    select d.id, d.name, p.rank,
           (select ts_headline('english', c.content, q.q, 'StartSel=**, StopSel=**, MaxWords=40, MinWords=15, MaxFragments=2, FragmentDelimiter=" … "')
              from knowledge_chunks c where c.document_id = p.document_id and c.tsv @@ q.q
             order by ts_rank_cd(c.tsv, q.q) desc, c.ordinal limit 1) as snippet
      from page p join knowledge_documents d on d.id = p.document_id, q
     order by p.rank desc, d.id desc`;

type Bench = Awaited<ReturnType<typeof setUp>>;

/** The bench's stores, Temporal, the API with its MCP door and the worker, and a customer with a read-write key. */
async function setUp() {
  step(`database ${DATABASE_URL} (recreated), Redis ${REDIS_URL} (flushed)`);
  await resetStores(DATABASE_URL, REDIS_URL);
  step('Temporal dev server');
  const log = (l: string) => console.log(`  [temporal] ${l}`);
  const temporal = await startBenchTemporal(reserved, { databaseUrl: DATABASE_URL, databaseName: 'unused by the dev server', log });
  step('API (bench/harness/serve-app.ts), its MCP door (the same with BENCH_DOOR=mcp) and worker (workers/main.ts) as child processes');
  const api = await startServer('api', 'bench/harness/serve-app.ts', process.env);
  const mcp = await startServer('mcp', 'bench/harness/serve-app.ts', { ...process.env, BENCH_DOOR: 'mcp' });
  const replay = await startServer('replay', 'bench/harness/serve-replay.ts', process.env);
  const worker = await launch({ kind: 'worker' });
  const bare = new pg.Pool({ connectionString: DATABASE_URL, max: opt.connections });
  const project = { name: 'Bench person', connection: 'none' } as const;
  const w = await benchWorkspace({ name: 'Knowledge Bench Co', project, scopes: ['read', 'write'], keyName: 'knowledge bench' });
  return { temporal, api, mcp, replay, worker, bare, key: w.key, workspaceId: w.workspace.id as string, project: w.project.id as string };
}

async function waitAll(ids: string[], timeoutMs: number) {
  const done = async () => !(await db()('jobs').whereIn('id', ids).whereIn('status', ['QUEUED', 'RUNNING']).first('id'));
  if (!(await until(done, timeoutMs, 100))) throw new Error('ingest jobs did not finish in time');
}

/** A warm-up of 5 documents, then --documents documents sent at once, each until its job is done: the report's line and the chunks. */
async function ingestDocuments(b: Bench) {
  const client = apiClient(b.api.baseUrl, b.key);
  const ingest = async (text: string) => {
    const { data, error, response } = await client.POST('/v1/knowledge', { body: { type: 'text', projectId: b.project, text } });
    if (!data) throw new Error(`ingest refused: ${response.status} ${JSON.stringify(error)}`);
    return data.data.id;
  };
  await b.worker.waitReady(workerPolls(TASK_QUEUE), 180_000);
  step('warm-up: 5 documents');
  await waitAll(await Promise.all(Array.from({ length: 5 }, () => ingest(documentText(2_000)))), 180_000);
  step(`ingest: ${opt.documents} documents of ${opt.bytes} bytes, sent at once`);
  const texts = Array.from({ length: opt.documents }, () => documentText(opt.bytes));
  const sent = performance.now();
  const ids = await Promise.all(texts.map(ingest));
  const acceptedMs = performance.now() - sent;
  await waitAll(ids, 600_000);
  const rows = await db()('jobs').whereIn('id', ids).select('status', 'created_at', 'completed_at');
  const done = rows.filter((r) => r.status === 'DONE');
  const span = Math.max(...done.map((r) => r.completed_at.getTime())) - Math.min(...rows.map((r) => r.created_at.getTime()));
  const chunks = await chunksOf(b.workspaceId);
  const line =
    `  ingest: ${done.length}/${opt.documents} DONE (${rows.length - done.length} not) · accepted in ${acceptedMs.toFixed(0)} ms · ` +
    `${((done.length * 1000) / span).toFixed(1)} documents/s (${((done.length * opt.bytes) / 1024 / (span / 1000)).toFixed(0)} KB/s) · ` +
    `job latency ${fmt(summarize(done.map((r) => r.completed_at.getTime() - r.created_at.getTime())))} · ${chunks} chunks`;
  return { chunks, line: opt.documents > 0 ? line : null };
}

/** The statements of each request, captured inside the server process that answers it. */
async function captureAll(server: ServerHandle, requests: CaptureRequest[], what: string) {
  const captured = [];
  for (const r of requests) captured.push(await captureStatements(server, r));
  step(`statements of one ${what}: ${describeStatements(captured[0]!)}`);
  return captured;
}

/** Search at each corpus size, REST and the MCP tool, each beside its statements bare and the minimal query. */
async function measureSearch(b: Bench, ingestChunks: number) {
  const { api, bare, workspaceId, project } = b;
  const headers = { Authorization: `Bearer ${b.key}`, 'Content-Type': 'application/json' };
  const queries = QUERIES.slice(0, 8);
  const searchTargets = queries.map((q) => {
    const path = `/v1/knowledge?${new URLSearchParams({ query: q, projectId: project })}`;
    return { url: `${api.baseUrl}${path}`, path, headers };
  });
  // One MCP session per connection over streamable HTTP with the SDK client, as bench/mcp.ts opens them.
  const sessions = await openSdkSessions(b.mcp.baseUrl, b.key, opt.connections);
  const { sessionId, protocolVersion } = sessions[0]!.transport as StreamableHTTPClientTransport;
  const session = { 'Mcp-Session-Id': sessionId!, 'Mcp-Protocol-Version': protocolVersion ?? '2025-06-18' };
  const callHeaders = { ...headers, Accept: 'application/json, text/event-stream', ...session };
  const params = (query: string) => ({ name: SEARCH_TOOL, arguments: { query, projectId: project } });
  // A tools/call of the search as one POST of that session, for the capture in the MCP process.
  const toolCalls = queries.map((q) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'capture', method: 'tools/call', params: params(q) });
    return { method: 'POST', path: '/mcp', headers: callHeaders, body };
  });
  // The search tool in a closed loop, a session per connection, queries rotated as the REST run rotates them.
  const call = async (i: number, connection: number) => {
    const answer = await sessions[connection]!.client.callTool(params(QUERIES[i % 8]!));
    if (answer.isError) throw new Error(`${SEARCH_TOOL}: ${JSON.stringify(answer.content)}`);
  };
  const tool = async () => {
    const r = await closedLoopCalls(call, { connections: sessions.length, durationMs: DURATION_MS });
    return { ...r, requests: r.calls, ok: r.calls, errors: 0, statuses: {}, bytesPerResponse: 0 };
  };
  const surfaces = [];
  let total = ingestChunks;
  for (const size of opt.chunks.split(',').map(Number)) {
    step(`search corpus: the workspace grows to ${size} chunks`);
    total = await growCorpus(workspaceId, project, total, size, opt.bytes, true);
    const captured = await captureAll(api, searchTargets, 'search');
    const toolCaptured = await captureAll(b.mcp, toolCalls, `${SEARCH_TOOL} call`);
    if (opt.explain) await explainAll(bare, captured[0]!, { text: MINIMAL_SQL, values: [workspaceId, QUERIES[0]!] });
    step(`search over ${total} chunks: API, same statements, minimal query (${opt.connections} connections, ${DURATION_MS / 1000} s each)`);
    const common = {
      corpus: `${total} chunks`,
      pool: bare,
      // Every query in one run, rotated per request as both baselines rotate them.
      minimal: (i: number) => bare.query(MINIMAL_SQL, [workspaceId, QUERIES[i % 8]!]),
      connections: opt.connections,
      durationMs: DURATION_MS,
      warmupMs: 3000,
    };
    const rest = () => closedLoop(searchTargets, { connections: opt.connections, durationMs: DURATION_MS });
    surfaces.push(
      await measureSurface({ ...common, surface: 'knowledge search', server: api, replayServer: b.replay, captured, api: rest }),
    );
    surfaces.push(await measureSurface({ ...common, surface: `MCP ${SEARCH_TOOL}`, server: b.mcp, captured: toolCaptured, api: tool }));
  }
  await Promise.all(sessions.map((s) => s.client.close()));
  return surfaces;
}

const bench = await setUp();
try {
  const ingested = await ingestDocuments(bench);
  const surfaces = await measureSearch(bench, ingested.chunks);
  console.log(`\nresults (${os.cpus().length} CPUs, load average ${loadAverage(2)})`);
  if (ingested.line) console.log(ingested.line);
  for (const f of surfaces)
    console.log(
      `  ${f.surface} over ${f.corpus}: API ${f.api.rps.toFixed(0)}/s ${fmt(f.api.latencyMs)} · same statements ${f.same.rps.toFixed(0)}/s ${fmt(f.same.latencyMs)} · ` +
        `minimal ${f.minimal.rps.toFixed(0)}/s ${fmt(f.minimal.latencyMs)} · API / same statements bare: ${f.apiOverSame.toFixed(2)}× · same statements / minimal: ${f.sameOverMinimal.toFixed(2)}×`,
    );
} finally {
  await Promise.all([bench.bare.end(), bench.worker.stop(), bench.api.stop(), bench.mcp.stop(), bench.replay.stop(), closeStores()]);
  await bench.temporal.dispose();
}
