import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { callFollowingJob, useMcpWithWorker, fails, ok } from '../support/mcp';
import { waitFor } from '../support/wait';
import { pngBytes } from './files';

// Generation grounded in a named source (docs/generation.md "Sources"; spec 4.4's fourth source
// variant): `{ type: 'source', sourceId }` over REST and the generate_post tool. The source must be
// of the same project and `Success`; the built-in writer writes from its text, so the draft
// carries its facts; the job's result names the source.

describe('generation from a named source (source.type = source)', function () {
  this.timeout(120_000);
  const mcp = useMcpWithWorker();

  const FACT = 'Our warehouse robots sorted 48,000 parcels in a single night last March.';
  const TEXT = `${FACT} The night shift watched the dashboard instead of carrying boxes. Robots now sort every parcel before dawn, and the parcels leave the warehouse two hours earlier.`;

  async function finishedJob(call: ReturnType<typeof client>, id: string) {
    return waitFor(async () => {
      const j = (await call('GET', `/v1/jobs/${id}`)).body.data;
      return ['DONE', 'FAILED', 'CANCELLED'].includes(j.status) ? j : null;
    }, 60_000);
  }
  async function textSource(call: ReturnType<typeof client>, projectId: string, text = TEXT): Promise<string> {
    const r = await call('POST', '/v1/sources', { body: { projectId, type: 'text', text } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.data.status, 'Success');
    return r.body.data.id;
  }
  const jobCount = async (workspaceId: string) =>
    Number((await db()('jobs').where({ workspace_id: workspaceId, type: 'POST_GENERATION' }).count('* as n'))[0]!.n);

  it('REST: the draft uses a fact of the source; the result records sourceId beside the knowledge used', async () => {
    const ws = await workspaceWithKey();
    const call = client(mcp.stack.apiUrl, ws.key);
    const sourceId = await textSource(call, ws.project.id);
    const kb = await call('POST', '/v1/knowledge', {
      body: {
        type: 'text',
        projectId: ws.project.id,
        text: 'Warehouse policy: every parcel robot is inspected each Monday by two engineers.',
      },
    });
    const indexed = await finishedJob(call, kb.body.data.id);
    assert.equal(indexed.status, 'DONE');
    const documentId = indexed.result.documentId;

    const gen = await call('POST', '/v1/posts/generations', {
      body: { projectId: ws.project.id, source: { type: 'source', sourceId }, wait_for_completion_ms: 20_000 },
    });
    assert.equal(gen.status, 200, JSON.stringify(gen.body));
    const done = gen.body.data.status === 'DONE' ? gen.body.data : await finishedJob(call, gen.body.data.id);
    assert.equal(done.status, 'DONE', JSON.stringify(done));
    assert.equal(done.result.sourceId, sourceId);
    assert.deepEqual(done.result.knowledgeDocumentIds, [documentId]);
    const post = (await call('GET', `/v1/posts/${done.result.postId}`)).body.data;
    assert.match(post.content, /48,000 parcels in a single night/);
    assert.match(post.content, /inspected each Monday/, 'the knowledge retrieval still runs');
    const row = await db()('jobs').where({ id: done.id }).first('input');
    assert.deepEqual(row.input.source, { type: 'source', sourceId });
  });

  it('a long source hands the writer its head within the grounding token budget', async () => {
    const ws = await workspaceWithKey();
    const call = client(mcp.stack.apiUrl, ws.key);
    const filler = Array.from({ length: 200 }, (_, i) => `Paragraph ${i} describes parcel routing in some detail.`).join(' ');
    const text = `${FACT} ${filler} The very last sentence mentions zeppelins.`;
    const sourceId = await textSource(call, ws.project.id, text);
    const gen = await call('POST', '/v1/posts/generations', { body: { projectId: ws.project.id, source: { type: 'source', sourceId } } });
    assert.equal(gen.status, 200, JSON.stringify(gen.body));
    const { input } = await db()('jobs').where({ id: gen.body.data.id }).first('input');
    const budget = config.knowledge.groundingTokenBudget * 4;
    assert.ok(input.sourceText.length <= budget && input.sourceText.length > budget * 0.8, String(input.sourceText.length));
    assert.ok(text.startsWith(input.sourceText), 'the head of the text');
    assert.match(text.slice(input.sourceText.length), /^\s/, 'cut at a word end');
    assert.doesNotMatch(input.sourceText, /zeppelins/);
    assert.equal((await finishedJob(call, gen.body.data.id)).status, 'DONE');
  });

  it('refuses a source of another project (422), of another workspace (as an unknown id), and one not Success (422 with the reason)', async () => {
    const ws = await workspaceWithKey({ projects: 2 });
    const other = await workspaceWithKey();
    const call = client(mcp.stack.apiUrl, ws.key);
    const otherCall = client(mcp.stack.apiUrl, other.key);
    const generate = (sourceId: string) =>
      call('POST', '/v1/posts/generations', { body: { projectId: ws.projects[0]!.id, source: { type: 'source', sourceId } } });

    const wrongProject = assertError(await generate(await textSource(call, ws.projects[1]!.id)), 422, 'unprocessable');
    assert.match(wrongProject.message, /same project/);

    // spec 1 rule 1: another workspace's source is indistinguishable from none at all.
    const foreignId = await textSource(otherCall, other.project.id);
    const foreign = assertError(await generate(foreignId), 422, 'unprocessable');
    const unknown = assertError(await generate('src_doesnotexist'), 422, 'unprocessable');
    assert.equal(foreign.message, unknown.message);
    assert.deepEqual(Object.keys(foreign.details ?? {}).sort(), Object.keys(unknown.details ?? {}).sort());

    // Still processing: the row as the ingest leaves it before its job finishes.
    const processing = await textSource(call, ws.projects[0]!.id);
    await db()('sources').where({ id: processing }).update({ status: 'Processing' });
    const notReady = assertError(await generate(processing), 422, 'unprocessable');
    assert.equal(notReady.details?.reason, 'source_not_ready');
    assert.equal(notReady.details?.status, 'Processing');

    // A file whose ingest failed (PNG bytes declared as text).
    const created = await call('POST', '/v1/sources', {
      body: {
        projectId: ws.projects[0]!.id,
        type: 'file',
        content_base64: pngBytes().toString('base64'),
        mimeType: 'text/plain',
        filename: 'notes.txt',
      },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const failedJob = await finishedJob(call, created.body.data.id);
    assert.equal(failedJob.status, 'FAILED');
    const failedSource = (await db()('sources').where({ job_id: failedJob.id }).first('id')).id as string;
    const failed = assertError(await generate(failedSource), 422, 'unprocessable');
    assert.equal(failed.details?.reason, 'source_failed');

    // Shape errors: the variant's field is required (400) and no other field belongs to it (422).
    assertError(
      await call('POST', '/v1/posts/generations', { body: { projectId: ws.projects[0]!.id, source: { type: 'source' } } }),
      400,
      'invalid_request',
    );
    assertError(
      await call('POST', '/v1/posts/generations', {
        body: { projectId: ws.projects[0]!.id, source: { type: 'source', sourceId: processing, text: 'x' } },
      }),
      422,
      'unprocessable',
    );
    assert.equal(await jobCount(ws.workspace.id), 0, 'no refusal queued a job');
  });

  it('MCP generate_post: the same variant, following the job; refusals as over REST', async () => {
    const { ws, client: agent } = await mcp.agent({ projects: 2 });
    const call = client(mcp.stack.apiUrl, ws.key);
    const sourceId = await textSource(call, ws.projects[0]!.id);
    const { data: job } = await callFollowingJob(agent, 'generate_post', {
      projectId: ws.projects[0]!.id,
      source: { type: 'source', sourceId },
    });
    assert.equal(job.status, 'DONE', JSON.stringify(job));
    assert.equal(job.result.sourceId, sourceId);
    const post = (await ok(agent, 'get_post', { postId: job.result.postId })).data;
    assert.match(post.content, /48,000 parcels in a single night/);

    const elsewhere = await textSource(call, ws.projects[1]!.id);
    await fails(
      agent,
      'generate_post',
      { projectId: ws.projects[0]!.id, source: { type: 'source', sourceId: elsewhere } },
      'unprocessable',
    );
    await fails(agent, 'generate_post', { projectId: ws.projects[0]!.id, source: { type: 'source' } }, 'invalid_request');
  });
});
