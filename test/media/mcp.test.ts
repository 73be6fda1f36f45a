import assert from 'node:assert/strict';
import { fails, ok, callFollowingJob, useMcpWithWorker } from '../support/mcp';
import { png } from './images';

// The media tools on the agent transport (docs/media.md "Doors"): create_upload_url → PUT →
// import_media → set_post_media, and generate_image following its job with notifications/progress.

describe('media tools over MCP', function () {
  this.timeout(90_000);
  const mcp = useMcpWithWorker();

  it('create_upload_url → PUT → import_media → set_post_media', async () => {
    const { ws, client } = await mcp.agent();
    const image = png(33, 22);
    const upload = (
      await ok(client, 'create_upload_url', { fileName: 'x.png', contentType: 'image/png', bytes: image.length, purpose: 'media' })
    ).data;
    assert.equal((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: image })).status, 200);
    // spec 4.7 / 4.9: an API key has no default project, so import_media without projectId is invalid_request.
    assert.equal((await fails(client, 'import_media', { uploadId: upload.id }, 'invalid_request')).details.field, 'projectId');
    assert.equal((await ok(client, 'list_media', {})).data.length, 0, 'nothing imported');
    const asset = (await ok(client, 'import_media', { projectId: ws.project.id, uploadId: upload.id, alt: 'from an agent' })).data;
    assert.equal(asset.width, 33);
    const post = (await ok(client, 'create_post_draft', { projectId: ws.project.id, content: 'Agent post' })).data;
    const updated = (await ok(client, 'set_post_media', { postId: post.id, images: [{ key: asset.key }] })).data;
    assert.deepEqual(updated.media.images, [{ key: asset.key, alt: 'from an agent', name: 'x.png' }]);
    assert.equal((await ok(client, 'list_media', {})).data.length, 1);
  });

  it('generate_image with a progressToken reports 0 … 1 and answers the finished job', async () => {
    const { ws, client } = await mcp.agent();
    const { data: job } = await callFollowingJob(client, 'generate_image', { projectId: ws.project.id, prompt: 'Agents draw cards too' });
    assert.equal(job.type, 'IMAGE_GENERATION');
    assert.equal(job.status, 'DONE');
    assert.match(job.result.assetId, /^med_/);
    const asset = (await ok(client, 'get_media', { mediaId: job.result.assetId })).data;
    assert.equal(asset.alt, 'Agents draw cards too');
  });
});
