import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { apiAndWorker } from '../support/stack';
import { connectedCompanyPage, connectedPersonalProject, simulator } from '../support/network';
import { waitFor } from '../support/wait';
import { inSeconds } from '../support/time';
import { png, sha256 } from './images';

// Publishing carries the images (docs/media.md "Publishing"): mint → PUT → import → attach →
// schedule, and the simulated network receives the post with its images, once, through its
// images API (initialize upload, PUT bytes, reference in the post).

describe('publishing posts with images (worker in-process, real Temporal, simulator, embedded store)', function () {
  this.timeout(90_000);
  const stack = apiAndWorker();
  const sim = simulator();

  async function uploadAndImport(projectId: string, image: Buffer, alt: string) {
    const minted = await stack.call('POST', '/v1/uploads', {
      body: { fileName: 'photo.png', contentType: 'image/png', bytes: image.length, purpose: 'media' },
    });
    assert.equal(minted.status, 200, JSON.stringify(minted.body));
    const put = await fetch(minted.body.data.url, { method: 'PUT', headers: minted.body.data.headers, body: image });
    assert.equal(put.status, 200);
    const imported = await stack.call('POST', '/v1/media', { body: { projectId, uploadId: minted.body.data.id, alt } });
    assert.equal(imported.status, 200, JSON.stringify(imported.body));
    return imported.body.data as { key: string; sha256: string };
  }

  async function scheduleWithImages(projectId: string, content: string, images: Array<{ key: string; alt?: string }>) {
    const created = await stack.call('POST', '/v1/posts', { body: { projectId, content } });
    const id = created.body.data.id as string;
    const attached = await stack.call('PATCH', `/v1/posts/${id}/media`, { body: { images } });
    assert.equal(attached.status, 200, JSON.stringify(attached.body));
    const scheduled = await stack.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: inSeconds(1) } });
    assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
    return id;
  }

  const published = (id: string) =>
    waitFor(async () => (await db()('posts').where({ id }).first()).status === 'published', 40_000, `post ${id} published`);

  it('mint → PUT → import → attach → schedule: the network receives the post with its image, once', async () => {
    const { project } = await connectedPersonalProject(stack.ws.workspace.id);
    const image = png(120, 80);
    const asset = await uploadAndImport(project.id, image, 'A chart of the quarter');
    const before = (await sim.counts()).calls;
    const id = await scheduleWithImages(project.id, 'Our quarter in one chart', [{ key: asset.key }]);
    await published(id);
    const { posts } = await sim.listPosts({ reference: id });
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.createCalls, 1);
    assert.equal(posts[0]!.images.length, 1);
    assert.equal(posts[0]!.images[0]!.sha256, sha256(image), 'the network holds the very bytes that were uploaded');
    assert.equal(posts[0]!.images[0]!.contentType, 'image/png');
    assert.equal(posts[0]!.images[0]!.altText, 'A chart of the quarter');
    const after = (await sim.counts()).calls;
    assert.equal(after.initializeImageUpload - before.initializeImageUpload, 1);
    assert.equal(after.uploadImage - before.uploadImage, 1);
    const read = await stack.call('GET', `/v1/posts/${id}`);
    assert.equal(read.status, 200);
  });

  it('several images go out as one multi-image post in their order, for a company page too', async () => {
    const { page } = await connectedCompanyPage(stack.ws.workspace.id);
    const a = png(30, 30);
    const b = png(31, 30);
    const first = (
      await stack.call('POST', '/v1/media', { body: { projectId: page.id, content_base64: a.toString('base64'), alt: 'first' } })
    ).body.data;
    const second = (
      await stack.call('POST', '/v1/media', { body: { projectId: page.id, content_base64: b.toString('base64'), alt: 'second' } })
    ).body.data;
    const id = await scheduleWithImages(page.id, 'Two pictures', [{ key: second.key }, { key: first.key, alt: 'first, edited' }]);
    await published(id);
    const { posts } = await sim.listPosts({ reference: id });
    assert.equal(posts.length, 1);
    assert.deepEqual(
      posts[0]!.images.map((i) => [i.sha256, i.altText]),
      [
        [sha256(b), 'second'],
        [sha256(a), 'first, edited'],
      ],
    );
  });

  it('a failure after the images went up retries the uploads and still creates the post once', async () => {
    const { project } = await connectedPersonalProject(stack.ws.workspace.id);
    const image = png(50, 40);
    const asset = await uploadAndImport(project.id, image, 'retry');
    await sim.addFault({ kind: 'transient', operation: 'createPost', times: 2 });
    const before = (await sim.counts()).calls;
    const id = await scheduleWithImages(project.id, 'Flaky with image', [{ key: asset.key }]);
    await published(id);
    const { posts } = await sim.listPosts({ reference: id });
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.images[0]!.sha256, sha256(image));
    const after = (await sim.counts()).calls;
    assert.ok(after.uploadImage - before.uploadImage >= 3, 'each attempt uploaded again (harmless)');
  });

  it('a lost answer to the post call is recognised by its reference: one post, images not uploaded again', async () => {
    const { project } = await connectedPersonalProject(stack.ws.workspace.id);
    const asset = await uploadAndImport(project.id, png(20, 60), 'lost');
    await sim.addFault({ kind: 'lost_response', operation: 'createPost', times: 1, lostAs: 'socket' });
    const before = (await sim.counts()).calls;
    const id = await scheduleWithImages(project.id, 'Lost answer with image', [{ key: asset.key }]);
    await published(id);
    const { posts } = await sim.listPosts({ reference: id });
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.images.length, 1);
    assert.equal((await sim.counts()).calls.uploadImage - before.uploadImage, 1);
  });
});
