import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { issueApiKey } from '../../admin/provision';
import { connect, fails, ok, callFollowingJob, useMcpWithWorker } from '../support/mcp';
import { wavWithTranscript } from './files';

// The source tools on the agent transport (spec 4.9; docs/sources.md "Doors"): inline files
// (base64, 25 MB decoded, keyed by SHA-256 so a retry lands on the same handle and the same
// job), create_source_file following its job with notifications/progress, get_source's scope.

describe('source tools over MCP', function () {
  this.timeout(120_000);
  const mcp = useMcpWithWorker();

  it('create_source_file inline with a progressToken reports 0 … 1 and answers the finished job; a retry lands on the same handle', async () => {
    const { ws, client } = await mcp.agent();
    const wav = wavWithTranscript('Agents can send recordings too. Recordings become sources with topics.', 2);
    const args = {
      type: 'file',
      content_base64: wav.toString('base64'),
      mimeType: 'audio/wav',
      filename: 'agent.wav',
      projectId: ws.project.id,
    };
    const { data: job } = await callFollowingJob(client, 'create_source_file', args);
    assert.equal(job.type, 'SOURCE_INGEST');
    assert.equal(job.status, 'DONE');

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
  });

  it('refuses bad inline files with the spec codes and stores nothing', async () => {
    const { ws, client } = await mcp.agent();
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
  });

  it('create_source_text answers the source; get_source needs sources:read on this door (REST: notes:read)', async () => {
    const { ws, client } = await mcp.agent();
    const created = (
      await ok(client, 'create_source_text', { projectId: ws.project.id, type: 'text', text: 'Pricing is a product decision.' })
    ).data;
    assert.equal(created.status, 'Success');
    const notesOnly = await issueApiKey({ workspaceId: ws.workspace.id, scopes: ['notes:read'] });
    const narrow = await connect('streamable', mcp.stack.mcpUrl, notesOnly.key);
    const refused = await fails(narrow, 'get_source', { sourceId: created.id }, 'scope_missing');
    assert.deepEqual(refused.details, { required_scope: 'sources:read' });
    const sourcesRead = await issueApiKey({ workspaceId: ws.workspace.id, scopes: ['sources:read'] });
    const reader = await connect('streamable', mcp.stack.mcpUrl, sourcesRead.key);
    assert.equal((await ok(reader, 'get_source', { sourceId: created.id })).data.id, created.id);
    await Promise.all([narrow.close(), reader.close()]);
  });
});
