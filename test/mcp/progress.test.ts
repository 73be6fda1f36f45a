import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { db } from '../../lib/db';
import { workspaceWithKey } from '../support/factories';
import { startApiProcess } from '../support/foundation';
import {
  connect,
  GENERATION_SOURCE,
  ok,
  rerouting,
  sessionIdOf,
  startGenerationWorker,
  startMcpStack,
  TRANSPORTS,
  type GenerationWorker,
  type McpStack,
} from '../support/mcp';

// spec 4.9 Progress: generate_post with a progressToken sends notifications/progress (0 first,
// increasing, total 1, 1.0 at the terminal job state) and the result after the last one; and
// the streamable transport's resumability: a stream broken off in one process is resumed with
// Last-Event-ID in another (events in Redis).

describe('MCP progress and resumable streams', function () {
  this.timeout(120_000);
  let stack: McpStack;
  let worker: GenerationWorker;
  before(async () => {
    stack = await startMcpStack();
    worker = await startGenerationWorker();
  });
  beforeEach(() => worker.stub.reset());
  after(async () => {
    await worker?.stop();
    await stack.close();
  });

  for (const kind of TRANSPORTS) {
    it(`generate_post reports progress in order and answers after the last notification (${kind})`, async () => {
      // Slow enough for several polls while the job runs.
      worker.stub.setLatency(2_500);
      const ws = await workspaceWithKey();
      const client = await connect(kind, stack.mcpUrl, ws.key);
      const events: Array<{ kind: 'progress'; p: Progress; at: number } | { kind: 'result'; at: number }> = [];
      const result = await client.callTool(
        { name: 'generate_post', arguments: { projectId: ws.project.id, source: GENERATION_SOURCE } },
        CallToolResultSchema,
        { onprogress: (p) => events.push({ kind: 'progress', p, at: Date.now() }), resetTimeoutOnProgress: true },
      );
      events.push({ kind: 'result', at: Date.now() });

      assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
      const job = (result.structuredContent as any).data;
      assert.equal(job.status, 'DONE');
      assert.match(job.result.postId, /^post_/);
      assert.equal((await ok(client, 'get_post', { postId: job.result.postId })).data.status, 'draft');

      const progress = events.filter((e) => e.kind === 'progress').map((e) => (e as { p: Progress }).p);
      assert.ok(progress.length >= 3, `expected 0, an intermediate value and 1, got ${JSON.stringify(progress)}`);
      assert.equal(progress[0]!.progress, 0);
      assert.equal(progress.at(-1)!.progress, 1);
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress, 'progress increases');
      for (const p of progress) assert.equal(p.total, 1);
      assert.ok(
        progress.some((p) => p.progress > 0 && p.progress < 1 && p.message),
        'an intermediate step with its message',
      );
      assert.equal(events.at(-1)!.kind, 'result', 'the result follows the last notification');
      await client.close();
    });
  }

  for (const kind of TRANSPORTS) {
    it(`generate_post sends an update about every 750 ms while a slow writer works, each saying what it waits on (${kind})`, async () => {
      // issue 29 item 4: before, a 4 s writer gave one intermediate notification (the figure rose once).
      worker.stub.setLatency(4_000);
      const ws = await workspaceWithKey();
      const client = await connect(kind, stack.mcpUrl, ws.key);
      const seen: Array<{ p: Progress; at: number }> = [];
      const result = await client.callTool(
        { name: 'generate_post', arguments: { projectId: ws.project.id, source: GENERATION_SOURCE } },
        CallToolResultSchema,
        { onprogress: (p) => seen.push({ p, at: Date.now() }), resetTimeoutOnProgress: true },
      );
      assert.equal((result.structuredContent as any).data.status, 'DONE');

      const intermediate = seen.filter(({ p }) => p.progress > 0 && p.progress < 1);
      assert.ok(intermediate.length >= 4, `at least 4 intermediate updates for a 4 s writer, got ${JSON.stringify(seen.map((e) => e.p))}`);
      for (const { p } of intermediate) assert.match(p.message ?? '', /\S/, 'every update says what the job waits on');
      assert.ok(
        intermediate.some(({ p }) => /^Writing the post\b/.test(p.message ?? '')),
        `an update names the writer step: ${JSON.stringify(intermediate.map((e) => e.p.message))}`,
      );
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i]!.p.progress > seen[i - 1]!.p.progress, 'progress increases');
      // "About every 750 ms": ticks keep to the cadence; one slow job read may delay one of them.
      const gaps = intermediate.slice(1).map((e, i) => e.at - intermediate[i]!.at);
      assert.ok(Math.max(...gaps) < 2_250, `gaps between updates ${JSON.stringify(gaps)}`);
      assert.ok(
        intermediate.every(({ p }) => p.progress < 0.99),
        'no update claims the job is nearly done before it is',
      );
      await client.close();
    });
  }

  it('generate_post without a progressToken answers the queued job at once, as REST does', async () => {
    const ws = await workspaceWithKey();
    const client = await connect('streamable', stack.mcpUrl, ws.key);
    const job = (await ok(client, 'generate_post', { projectId: ws.project.id, source: GENERATION_SOURCE })).data;
    assert.equal(job.status, 'QUEUED');
    await client.close();
  });

  it('a broken stream resumes with Last-Event-ID in another API process and delivers the result', async () => {
    const second = await startApiProcess();
    try {
      worker.stub.setLatency(1_500);
      const ws = await workspaceWithKey();
      const first = await connect('streamable', stack.mcpUrl, ws.key);
      const sessionId = sessionIdOf(first);
      const cursors: string[] = [];
      let sawProgress!: () => void;
      const progressed = new Promise<void>((r) => {
        sawProgress = r;
      });
      const call = first
        .request(
          { method: 'tools/call', params: { name: 'generate_post', arguments: { projectId: ws.project.id, source: GENERATION_SOURCE } } },
          CallToolResultSchema,
          {
            onprogress: () => sawProgress(),
            onresumptiontoken: (t) => {
              cursors.push(t);
            },
          },
        )
        .catch((err: Error) => err);
      await progressed;
      // The first cursor is the stream's start (the SDK's priming event); resuming from it
      // replays everything the stream carried.
      const resumeFrom = cursors[0];
      assert.match(resumeFrom ?? '', /\.0-0$/);
      assert.ok(cursors.length >= 2, 'a cursor per event');
      // The connection breaks (the host's network drops, say) while the job runs.
      await first.close();
      assert.ok((await call) instanceof Error);

      // The job finishes meanwhile; the server keeps storing the stream's events.
      const jobRow = await (async () => {
        for (;;) {
          const row = await db()('jobs').where({ workspace_id: ws.workspace.id }).first();
          if (row?.status === 'DONE') return row;
          await sleep(100);
        }
      })();
      await sleep(1_000);

      // The host reconnects to the same session through another process and resumes.
      const resumed = new Client({ name: 'mcp-test-agent', version: '1.0.0' });
      await resumed.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', stack.mcpUrl), {
          sessionId,
          requestInit: { headers: { Authorization: `Bearer ${ws.key}` } },
          fetch: rerouting(stack.mcpUrl, second.mcpUrl, () => true),
        }),
      );
      const result = await resumed.request(
        { method: 'tools/call', params: { name: 'generate_post', arguments: {} } },
        CallToolResultSchema,
        { resumptionToken: resumeFrom },
      );
      const job = (result.structuredContent as any).data;
      assert.equal(job.id, jobRow.id);
      assert.equal(job.status, 'DONE');
      assert.equal(job.result.postId, jobRow.result.postId);
      await resumed.close();
    } finally {
      await second.close();
    }
  });
});
