import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connectedPersonalProject, simulator } from '../support/network';
import { IsolatedStack } from '../support/processes';
import { waitFor } from '../support/wait';
import { png, sha256 } from './images';

// Exactly-once with images (docs/media.md "Publishing"): the worker process is killed (SIGKILL)
// after an image upload reached the network and before the post call. The activity's
// start-to-close timeout (2 minutes) brings the publish back on a new worker, which uploads the
// image again (harmless: the first one is never referenced) and creates the post once.
describe('publishing with an image survives a worker killed between image upload and post creation (end to end)', function () {
  this.timeout(300_000);
  const sim = simulator();
  const stack = new IsolatedStack(`media-crash-${newId('request')}`);

  before(() => stack.start());
  after(async () => {
    await sim.setLatency({ ms: 0 });
    await stack.stop();
  });

  it('publishes the post exactly once, with its image', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const call = client(stack.apiUrl, ws.key);
    const image = png(90, 60);
    const asset = (
      await call('POST', '/v1/media', { body: { projectId: project.id, content_base64: image.toString('base64'), alt: 'survives' } })
    ).body.data;
    const created = await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'Crash between image and post' } });
    const id = created.body.data.id as string;
    assert.equal((await call('PATCH', `/v1/posts/${id}/media`, { body: { images: [{ key: asset.key }] } })).status, 200);

    // The upload reaches the network, which answers only after 3 s: the worker dies waiting.
    await sim.setLatency({ ms: 3_000, operation: 'uploadImage' });
    const before = (await sim.counts()).calls;
    assert.equal(
      (await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: new Date(Date.now() + 1000).toISOString() } })).status,
      200,
    );
    await waitFor(
      async () => (await sim.counts()).calls.uploadImage > before.uploadImage,
      30_000,
      'the image upload to reach the network',
      20,
    );
    await stack.worker!.kill('SIGKILL');
    const atKill = (await sim.counts()).calls;
    assert.equal(atKill.createPost, before.createPost, 'no post call was made before the crash');

    await sim.setLatency({ ms: 0, operation: 'uploadImage' });
    await stack.startWorker();
    await waitFor(
      async () => (await db()('posts').where({ id }).first()).status === 'published',
      200_000,
      'published after the crash',
      500,
    );

    const { posts } = await sim.listPosts({ reference: id });
    assert.equal(posts.length, 1, 'one post');
    assert.equal(posts[0]!.createCalls, 1, 'created by a single call');
    assert.equal(posts[0]!.images.length, 1);
    assert.equal(posts[0]!.images[0]!.sha256, sha256(image));
    const after = (await sim.counts()).calls;
    assert.ok(after.uploadImage - before.uploadImage >= 2, 'the image went up again after the crash');
  });
});
