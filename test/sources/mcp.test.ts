import assert from 'node:assert/strict';
import type { Worker } from '@temporalio/worker';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { issueApiKey } from '../../ops/provision';
import { createWorker } from '../../workers/worker';
import { workspaceWithKey } from '../support/factories';
import { connect, fails, ok, startMcpStack, type McpStack } from '../mcp/support';
import { wavWithTranscript } from './files';

// The source tools on the agent transport (spec 4.9; docs/sources.md "Doors"): inline files
// (base64, 25 MB decoded, keyed by SHA-256 so a retry lands on the same handle and the same
// job), create_source_file following its job with notifications/progress, get_source's scope.

describe('source tools over MCP', function () {
  this.timeout(120_000);
  let stack: McpStack;
  let worker: Worker;
  let running: Promise<void>;
  before(async () => {
    stack = await startMcpStack();
    ({ worker } = await createWorker());
    running = worker.run();
  });
  after(async () => {
    worker.shutdown();
    await running;
    await stack.close();
  });

  it('create_source_file inline with a progressToken reports 0 … 1 and answers the finished job; a retry lands on the same handle', async () => {
    const ws = await workspaceWithKey();
    const client = await connect('streamable', stack.mcpUrl, ws.key);
    const wav = wavWithTranscript('Agents can send recordings too. Recordings become sources with topics.', 2);
    const args = {
      type: 'file',
      content_base64: wav.toString('base64'),
      mimeType: 'audio/wav',
      filename: 'agent.wav',
      projectId: ws.project.id,
    };
    const progress: Progress[] = [];
    let lastProgressAt = 0;
    const result = await client.callTool({ name: 'create_source_file', arguments: args }, CallToolResultSchema, {
      onprogress: (p) => {
        progress.push(p);
        lastProgressAt = Date.now();
      },
      resetTimeoutOnProgress: true,
    });
    const resultAt = Date.now();
    assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
    const job = (result.structuredContent as any).data;
    assert.equal(job.type, 'SOURCE_INGEST');
    assert.equal(job.status, 'DONE');
    assert.equal(progress[0]!.progress, 0);
    assert.equal(progress.at(-1)!.progress, 1);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress);
    assert.ok(resultAt >= lastProgressAt, 'the result follows the last notification');

    const source = (await ok(client, 'get_source', { sourceId: job.result.sourceId })).data;
    assert.equal(source.status, 'Success');
    assert.equal(source.preview, 'Agents can send recordings too. Recordings become sources with topics.');
    assert.equal(source.durationSeconds, 2);
    assert.ok(source.topics.includes('recordings'));

    // The retry: the same bytes give the same upl_ handle, so the same source and job answer.
    const again = (await ok(client, 'create_source_file', args)).data;
    assert.equal(again.id, job.id);
    const rows = await db()('sources').where({ workspace_id: ws.workspace.id });
    assert.equal(rows.length, 1);
    assert.equal(Number((await db()('uploads').where({ workspace_id: ws.workspace.id }).count('* as n'))[0]!.n), 1);
    await client.close();
  });

  it('refuses bad inline files with the spec codes and stores nothing', async () => {
    const ws = await workspaceWithKey();
    const client = await connect('streamable', stack.mcpUrl, ws.key);
    const base = { type: 'file', mimeType: 'text/plain', filename: 'a.txt', projectId: ws.project.id };
    await fails(client, 'create_source_file', { ...base, content_base64: 'not base64 at all' }, 'invalid_request');
    await fails(client, 'create_source_file', { ...base, content_base64: 'data:text/plain;base64,aGVsbG8=' }, 'invalid_request');
    await fails(client, 'create_source_file', { ...base, content_base64: 'aGVsbG8-' }, 'invalid_request');
    // All three inline fields are required (spec 4.9).
    await fails(
      client,
      'create_source_file',
      { type: 'file', content_base64: 'aGVsbG8=', filename: 'a.txt', projectId: ws.project.id },
      'invalid_request',
    );
    // 25 MB decoded is the limit (spec 8): one byte more is payload_too_large.
    const tooBig = Buffer.alloc(config.media.mcpInlineMaxBytes + 1, 0x61).toString('base64');
    const err = await fails(client, 'create_source_file', { ...base, content_base64: tooBig }, 'payload_too_large');
    assert.equal(err.details?.limit, 25 * 1024 * 1024);
    assert.equal(Number((await db()('uploads').where({ workspace_id: ws.workspace.id }).count('* as n'))[0]!.n), 0);
    assert.equal(Number((await db()('sources').where({ workspace_id: ws.workspace.id }).count('* as n'))[0]!.n), 0);
    await client.close();
  });

  it('create_source_text answers the source; get_source needs sources:read on this door (REST: notes:read)', async () => {
    const ws = await workspaceWithKey();
    const client = await connect('streamable', stack.mcpUrl, ws.key);
    const created = (
      await ok(client, 'create_source_text', { projectId: ws.project.id, type: 'text', text: 'Pricing is a product decision.' })
    ).data;
    assert.equal(created.status, 'Success');
    const notesOnly = await issueApiKey({ workspaceId: ws.workspace.id, scopes: ['notes:read'] });
    const narrow = await connect('streamable', stack.mcpUrl, notesOnly.key);
    const refused = await fails(narrow, 'get_source', { sourceId: created.id }, 'scope_missing');
    assert.deepEqual(refused.details, { required_scope: 'sources:read' });
    const sourcesRead = await issueApiKey({ workspaceId: ws.workspace.id, scopes: ['sources:read'] });
    const reader = await connect('streamable', stack.mcpUrl, sourcesRead.key);
    assert.equal((await ok(reader, 'get_source', { sourceId: created.id })).data.id, created.id);
    await Promise.all([client.close(), narrow.close(), reader.close()]);
  });
});
