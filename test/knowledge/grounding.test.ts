import assert from 'node:assert/strict';
import type { NativeConnection } from '@temporalio/worker';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { createKnowledgeActivities } from '../../activities/knowledge';
import { composePost } from '../../lib/llm/builtin';
import { db } from '../../lib/db';
import { retrieveKnowledge } from '../../lib/knowledge/documents';
import type { Resolver } from '../../lib/outbound/resolve';
import { createTranscriptClient } from '../../lib/knowledge/youtube';
import { objectStore } from '../../lib/storage/objectStore';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connect, ok, startMcpStack, type McpStack } from '../support/mcp';
import { waitFor } from '../support/wait';
import { maybeRecordHistory } from '../support/histories';
import { temporalClient } from '../../lib/temporal/client';
import { resyncKnowledgeWorkflow } from '../../workflows/resyncKnowledge';
import { startPageServer, type PageServer } from './support';
import { config } from '../../lib/config';

// Generation grounded in the knowledge base (docs/knowledge.md "Grounding"), URL re-sync that
// re-indexes only changed content, and the knowledge tools on the agent transport (same answers
// as REST).

describe('knowledge: grounding, re-sync, MCP tools', function () {
  this.timeout(120_000);
  let stack: McpStack;
  let pages: PageServer;
  let current: { worker: ServiceWorker; connection: NativeConnection; running: Promise<void> } | null = null;
  const saved = { ...config.knowledge };
  const resolve: Resolver = async () => {
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  };
  let acts: ReturnType<typeof createKnowledgeActivities>;

  before(async () => {
    stack = await startMcpStack();
    pages = await startPageServer();
    Object.assign(config.knowledge, { allowLoopback: true, allowHttp: true });
    acts = createKnowledgeActivities({
      db: db(),
      store: objectStore,
      transcripts: createTranscriptClient({ baseUrl: process.env.YOUTUBE_TRANSCRIPT_URL, port: 0, timeoutMs: 5_000 }),
      resolve,
    });
    const { worker, connection } = await createWorker({ activities: acts });
    current = { worker, connection, running: worker.run() };
  });
  after(async () => {
    if (current) {
      current.worker.shutdown();
      await current.running;
      await current.connection.close();
    }
    Object.assign(config.knowledge, saved);
    await pages.close();
    await stack.close();
  });

  async function finishedJob(call: ReturnType<typeof client>, id: string) {
    return waitFor(async () => {
      const j = (await call('GET', `/v1/jobs/${id}`)).body.data;
      return ['DONE', 'FAILED', 'CANCELLED'].includes(j.status) ? j : null;
    }, 60_000);
  }

  it('the built-in writer uses the most relevant knowledge sentence, deterministically', () => {
    const input = {
      sourceText: 'Write about our release process. We ship on Tuesdays and every release is reviewed twice.',
      language: 'en',
      contentType: 'PERSONAL' as const,
      knowledge: [
        { title: 'Cooking', text: 'Our chef prefers basil to parsley in every sauce.' },
        { title: 'Policy', text: 'Unrelated opening line here. Every release comes with a 14-day rollback guarantee for customers.' },
      ],
    };
    const a = composePost(input);
    assert.match(a, /Every release comes with a 14-day rollback guarantee for customers\./);
    assert.doesNotMatch(a, /basil/);
    assert.equal(composePost(input), a);
    const { knowledge: _k, ...bare } = input;
    assert.doesNotMatch(composePost(bare), /rollback guarantee/);
  });

  it('a generation for a project draws on its and the workspace knowledge, not another project’s, and records the documents used', async () => {
    const ws = await workspaceWithKey({ projects: 2 });
    const call = client(stack.apiUrl, ws.key);
    const add = async (body: Record<string, unknown>) => {
      const r = await call('POST', '/v1/knowledge', { body: { type: 'text', ...body } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const j = await finishedJob(call, r.body.data.id);
      assert.equal(j.status, 'DONE');
      return j.result.documentId as string;
    };
    const fact = await add({
      projectId: ws.projects[0]!.id,
      text: 'Company history: founded in 2011 in Ghent.\n\nEvery deploy pipeline we run has a 14-day rollback guarantee for each release.',
    });
    const shared = await add({ scope: 'WORKSPACE', text: 'House style: we always write the word checklist in lower case.' });
    const foreign = await add({
      projectId: ws.projects[1]!.id,
      text: 'Secret: the release checklist of project two has ninety-nine steps and rollbacks weekly.',
    });

    const gen = await call('POST', '/v1/posts/generations', {
      body: {
        projectId: ws.projects[0]!.id,
        source: { type: 'text', text: 'We moved our release checklist into the deploy pipeline this quarter. Rollbacks dropped by half.' },
      },
    });
    assert.equal(gen.status, 200, JSON.stringify(gen.body));
    const done = await finishedJob(call, gen.body.data.id);
    assert.equal(done.status, 'DONE', JSON.stringify(done));
    assert.ok(done.result.knowledgeDocumentIds.includes(fact), JSON.stringify(done.result));
    assert.ok(done.result.knowledgeDocumentIds.includes(shared));
    assert.ok(!done.result.knowledgeDocumentIds.includes(foreign));
    const post = (await call('GET', `/v1/posts/${done.result.postId}`)).body.data;
    assert.match(post.content, /14-day rollback guarantee/);
    assert.doesNotMatch(post.content, /ninety-nine/);

    // The budget holds: a tiny budget hands over less text than a large one.
    const small = await retrieveKnowledge(db(), {
      workspaceId: ws.workspace.id,
      projectId: ws.projects[0]!.id,
      text: 'release checklist deploy pipeline rollback',
      tokenBudget: 25,
    });
    assert.ok(small.blocks.reduce((n, b) => n + b.text.length, 0) <= 100);
    const extra = await retrieveKnowledge(db(), {
      workspaceId: ws.workspace.id,
      projectId: ws.projects[0]!.id,
      text: 'release checklist',
      tokenBudget: 600,
      extra: [{ documentId: null, title: 'Named source', text: 'A source the request named.' }],
    });
    assert.equal(extra.blocks[0]!.title, 'Named source');
    assert.ok(!extra.documentIds.includes(foreign));
  });

  it('a generation with no relevant knowledge records none', async () => {
    const ws = await workspaceWithKey();
    const call = client(stack.apiUrl, ws.key);
    const gen = await call('POST', '/v1/posts/generations', {
      body: {
        projectId: ws.project.id,
        source: { type: 'text', text: 'A quiet week: we planted tomatoes behind the office and watered them daily.' },
      },
    });
    const done = await finishedJob(call, gen.body.data.id);
    assert.equal(done.status, 'DONE');
    assert.equal(done.result.knowledgeDocumentIds, undefined);
  });

  it('URL re-sync: lastSyncedAt moves on every sync; chunks are rewritten only when the content changed', async () => {
    const ws = await workspaceWithKey();
    const call = client(stack.apiUrl, ws.key);
    let paragraphs = ['Version one of the handbook says meetings end at five past the hour, always, without exception.'];
    pages.set('/handbook', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(paragraphs.join('\n\n'));
    });
    const r = await call('POST', '/v1/knowledge', { body: { type: 'url', projectId: ws.project.id, url: `${pages.url}/handbook` } });
    const j = await finishedJob(call, r.body.data.id);
    assert.equal(j.status, 'DONE', JSON.stringify(j));
    const id = j.result.documentId as string;
    const chunkIds = async () =>
      (await db()('knowledge_chunks').where({ document_id: id }).orderBy('ordinal').select('id')).map((c) => String(c.id));
    const first = (await call('GET', `/v1/knowledge/${id}`)).body.data;
    const idsBefore = await chunkIds();

    const unchanged = await acts.resyncKnowledgeDocument(id);
    assert.deepEqual(unchanged, { changed: false });
    const second = (await call('GET', `/v1/knowledge/${id}`)).body.data;
    assert.ok(new Date(second.lastSyncedAt) > new Date(first.lastSyncedAt));
    assert.deepEqual(await chunkIds(), idsBefore, 'unchanged content keeps its chunks');

    paragraphs = ['Version two of the handbook says meetings end at ten past the hour.', 'And standups are optional on Fridays.'];
    assert.deepEqual(await acts.resyncKnowledgeDocument(id), { changed: true });
    const third = (await call('GET', `/v1/knowledge/${id}`)).body.data;
    assert.match(third.textPreview, /Version two/);
    assert.notDeepEqual(await chunkIds(), idsBefore);
    const hits = (await call('GET', `/v1/knowledge?${new URLSearchParams({ query: 'standups' })}`)).body.data;
    assert.deepEqual(
      hits.map((h: { id: string }) => h.id),
      [id],
    );
    assert.equal((await call('GET', `/v1/knowledge?${new URLSearchParams({ query: 'exception' })}`)).body.data.length, 0);

    // The schedule's batch: a document synced just now is not due.
    assert.ok(!(await acts.dueUrlDocuments({ olderThanSeconds: 3600, limit: 50 })).includes(id));
    assert.ok((await acts.dueUrlDocuments({ olderThanSeconds: 0, limit: 10_000 })).includes(id));
  });

  it('the re-sync workflow re-fetches the due URL documents and re-indexes the changed one', async () => {
    const ws = await workspaceWithKey();
    const call = client(stack.apiUrl, ws.key);
    let body = 'The first edition of the field guide says owls hunt at dusk along the hedges.';
    pages.set('/field-guide', (_req, res) => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(body));
    const r = await call('POST', '/v1/knowledge', { body: { type: 'url', projectId: ws.project.id, url: `${pages.url}/field-guide` } });
    const j = await finishedJob(call, r.body.data.id);
    assert.equal(j.status, 'DONE', JSON.stringify(j));
    const id = j.result.documentId as string;
    // Synced "long ago", so that this run's batch is exactly this document (others in the
    // database were synced during this test run).
    const longAgo = new Date('2001-01-01T00:00:00Z');
    await db()('knowledge_documents').where({ id }).update({ last_synced_at: longAgo });
    body = 'The second edition of the field guide says owls hunt at night over open meadows.';
    const temporal = await temporalClient();
    const workflowId = `knowledge-resync-test-${id}`;
    const outcome = await temporal.workflow.execute(resyncKnowledgeWorkflow, {
      taskQueue: config.temporalTaskQueue,
      workflowId,
      args: [{ olderThanSeconds: Math.floor((Date.now() - longAgo.getTime()) / 1000) - 86_400 }],
    });
    assert.deepEqual(outcome, { checked: 1, changed: 1, failed: 0 });
    const doc = (await call('GET', `/v1/knowledge/${id}`)).body.data;
    assert.match(doc.textPreview, /second edition/);
    assert.ok(new Date(doc.lastSyncedAt) > longAgo);
    await maybeRecordHistory(workflowId, 'resyncKnowledge-one-changed');
  });

  it('MCP: add_to_knowledge_base follows its job with progress; get and search answer what REST answers', async () => {
    const ws = await workspaceWithKey();
    const call = client(stack.apiUrl, ws.key);
    const mcp: McpClient = await connect('streamable', stack.mcpUrl, ws.key);
    try {
      const progress: Progress[] = [];
      const result = await mcp.callTool(
        {
          name: 'add_to_knowledge_base',
          arguments: { type: 'text', projectId: ws.project.id, text: 'Agents add knowledge about narwhal tusks too.' },
        },
        CallToolResultSchema,
        { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
      );
      assert.ok(!result.isError, JSON.stringify(result));
      const job = (result.structuredContent as { data: { status: string; type: string; result: { documentId: string } } }).data;
      assert.equal(job.type, 'KNOWLEDGE_INGEST');
      assert.equal(job.status, 'DONE');
      assert.equal(progress[0]!.progress, 0);
      assert.equal(progress[progress.length - 1]!.progress, 1);
      const id = job.result.documentId;

      const viaMcp = (await ok(mcp, 'get_knowledge_document', { documentId: id })).data;
      const viaRest = (await call('GET', `/v1/knowledge/${id}`)).body.data;
      assert.deepEqual(viaMcp, viaRest);
      const searchMcp = await ok(mcp, 'search_knowledge_base', { query: 'narwhal' });
      const searchRest = (await call('GET', `/v1/knowledge?${new URLSearchParams({ query: 'narwhal' })}`)).body;
      assert.deepEqual(searchMcp, searchRest);
      assert.equal(searchRest.data[0].id, id);

      const bad = await mcp.callTool({ name: 'add_to_knowledge_base', arguments: { type: 'text', text: 'no project' } });
      assert.equal(bad.isError, true);
      assert.equal((bad.structuredContent as { code: string }).code, 'invalid_request');
      const missing = await mcp.callTool({ name: 'get_knowledge_document', arguments: { documentId: 'kb_nope' } });
      assert.equal((missing.structuredContent as { code: string }).code, 'not_found');
    } finally {
      await mcp.close();
    }
  });
});
