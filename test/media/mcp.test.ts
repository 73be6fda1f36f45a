import assert from 'node:assert/strict';
import type { Worker } from '@temporalio/worker';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { createWorker } from '../../workers/worker';
import { workspaceWithKey } from '../support/factories';
import { connect, ok, startMcpStack, type McpStack } from '../mcp/support';
import { png } from './images';

// The media tools on the agent transport (docs/media.md "Doors"): create_upload_url → PUT →
// import_media → set_post_media, and generate_image following its job with notifications/progress.

describe('media tools over MCP', function () {
  this.timeout(90_000);
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

  it('create_upload_url → PUT → import_media → set_post_media', async () => {
    const ws = await workspaceWithKey();
    const client = await connect('streamable', stack.mcpUrl, ws.key);
    const image = png(33, 22);
    const upload = (
      await ok(client, 'create_upload_url', { fileName: 'x.png', contentType: 'image/png', bytes: image.length, purpose: 'media' })
    ).data;
    assert.equal((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: image })).status, 200);
    const asset = (await ok(client, 'import_media', { uploadId: upload.id, alt: 'from an agent' })).data;
    assert.equal(asset.width, 33);
    const post = (await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'Agent post' })).data;
    const updated = (await ok(client, 'set_post_media', { postId: post.id, images: [{ key: asset.key }] })).data;
    assert.deepEqual(updated.media.images, [{ key: asset.key, alt: 'from an agent', name: 'x.png' }]);
    assert.equal((await ok(client, 'list_media', {})).data.length, 1);
    await client.close();
  });

  it('generate_image with a progressToken reports 0 … 1 and answers the finished job', async () => {
    const ws = await workspaceWithKey();
    const client = await connect('streamable', stack.mcpUrl, ws.key);
    const progress: Progress[] = [];
    let resultAt = 0;
    let lastProgressAt = 0;
    const result = await client.callTool(
      { name: 'generate_image', arguments: { projectId: ws.project.id, prompt: 'Agents draw cards too' } },
      CallToolResultSchema,
      {
        onprogress: (p) => {
          progress.push(p);
          lastProgressAt = Date.now();
        },
        resetTimeoutOnProgress: true,
      },
    );
    resultAt = Date.now();
    assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
    const job = (result.structuredContent as any).data;
    assert.equal(job.type, 'IMAGE_GENERATION');
    assert.equal(job.status, 'DONE');
    assert.match(job.result.assetId, /^med_/);
    assert.equal(progress[0]!.progress, 0);
    assert.equal(progress.at(-1)!.progress, 1);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress);
    assert.ok(resultAt >= lastProgressAt, 'the result follows the last notification');
    const asset = (await ok(client, 'get_media', { mediaId: job.result.assetId })).data;
    assert.equal(asset.alt, 'Agents draw cards too');
    await client.close();
  });
});
