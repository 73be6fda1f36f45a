import assert from 'node:assert/strict';
import { createImageGenerationActivities } from '../../activities/imageGeneration';
import { config, serviceAddresses } from '../../lib/config';
import { db } from '../../lib/db';
import { BuiltinImageGenerator, createImageGenerator, OpenAiImageGenerator } from '../../lib/media/imageGenerator';
import { renderQuoteCard } from '../../lib/media/render';
import { objectStore } from '../../lib/storage/objectStore';
import { startLlmStub, type LlmStub } from '../../sim/llm/server';
import { client, startApi, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { testWorker, type TestActivities } from '../support/worker';
import { assertError } from '../support/foundation';
import { connectedPersonalProject, simulator } from '../support/network';
import { waitFor } from '../support/wait';
import { sha256 } from './images';

// Image generation jobs (docs/media.md "Image generation"): the job envelope of post
// generation (QUEUED → RUNNING → DONE, cancel while QUEUED, idempotency, AI spend), the
// images API through its real client by default (the run's LLM simulator), the built-in card
// renderer when chosen, an OpenAI-compatible images API (the LLM stub), and the asset attached to
// the post and published with it.

describe('image generation jobs (POST /v1/media/generations)', function () {
  this.timeout(90_000);
  let api: TestServer;
  let stub: LlmStub;
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  let call: ReturnType<typeof client>;
  const worker = testWorker();
  const sim = simulator();
  const startWorker = (activities?: TestActivities) => worker.start(activities);
  const stopWorker = () => worker.stop();

  before(async () => {
    api = await startApi();
    stub = await startLlmStub();
    ws = await workspaceWithKey({ projects: 1 });
    call = client(api.url, ws.key);
  });
  after(async () => {
    await stopWorker();
    await stub.close();
    await api.close();
  });

  const job = async (id: string) => (await call('GET', `/v1/jobs/${id}`)).body.data;
  /** The job once DONE: as answered when the request's wait saw it finish, else polled until it does. */
  const finished = async (answered: any): Promise<any> => {
    if (answered.status === 'DONE') return answered;
    return waitFor(
      async () => {
        const x = await job(answered.id);
        return x.status === 'DONE' && x;
      },
      30_000,
      'DONE',
    );
  };

  it('validates: prompt or postId, a post of the same project, the project of the workspace', async () => {
    assertError(await call('POST', '/v1/media/generations', { body: { projectId: ws.projects[0]!.id } }), 422, 'unprocessable');
    assertError(await call('POST', '/v1/media/generations', { body: { projectId: 'proj_nope', prompt: 'x' } }), 404, 'not_found');
    const other = await workspaceWithKey({ projects: 1 });
    const foreignPost = (
      await client(api.url, other.key)('POST', '/v1/posts', { body: { projectId: other.projects[0]!.id, content: 'theirs' } })
    ).body.data.id;
    assertError(
      await call('POST', '/v1/media/generations', { body: { projectId: ws.projects[0]!.id, postId: foreignPost } }),
      404,
      'not_found',
    );
    const { project: second } = await connectedPersonalProject(ws.workspace.id);
    const elsewhere = (await call('POST', '/v1/posts', { body: { projectId: second.id, content: 'elsewhere' } })).body.data.id;
    assertError(
      await call('POST', '/v1/media/generations', { body: { projectId: ws.projects[0]!.id, postId: elsewhere } }),
      422,
      'unprocessable',
    );
    assertError(
      await call('POST', '/v1/media/generations', { body: { projectId: ws.projects[0]!.id, prompt: 'x', style: 'cubist' } }),
      422,
      'unprocessable',
    );
  });

  it('a QUEUED job can be cancelled (no worker yet): CANCELLED, reservation released, idempotent replay', async () => {
    const headers = { 'Idempotency-Key': `img-${Date.now()}` };
    const body = { projectId: ws.projects[0]!.id, prompt: 'Never drawn' };
    const created = await call('POST', '/v1/media/generations', { body, headers });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const j = created.body.data;
    assert.equal(j.type, 'IMAGE_GENERATION');
    assert.equal(j.status, 'QUEUED');
    const replay = await call('POST', '/v1/media/generations', { body, headers });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.data.id, j.id);
    const row = await db()('jobs').where({ id: j.id }).first();
    assert.equal(row.reserved_cents, config.images.reserveCents);
    const cancelled = await call('POST', `/v1/jobs/${j.id}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.data.status, 'CANCELLED');
    assert.ok((await db()('jobs').where({ id: j.id }).first()).spend_settled_at, 'the reservation is settled');
  });

  it('is the images API client by default (the LLM simulator of the run), the built-in renderer only when chosen', () => {
    // issue 29 item 5: the real HTTP client runs by default, as the writer's does.
    assert.ok(createImageGenerator() instanceof OpenAiImageGenerator);
    const unset = {
      ...config,
      llm: { ...config.llm, baseUrl: undefined, simulatorPort: 4901 },
      images: { ...config.images, baseUrl: undefined },
    };
    assert.deepEqual(serviceAddresses(unset).images, { address: 'http://127.0.0.1:4901/v1', local: true, port: 4901 });
    const own = { ...config, images: { ...config.images, baseUrl: 'https://images.example/v1' } };
    assert.equal(serviceAddresses(own).images?.address, 'https://images.example/v1');
    assert.equal(serviceAddresses({ ...config, images: { ...config.images, generator: 'builtin' } }).images, null);
  });

  it('built-in renderer: the hook of the post as a card, attached to the post and published with it', async () => {
    await startWorker(
      createImageGenerationActivities({ db: db(), images: new BuiltinImageGenerator(), store: objectStore }) as unknown as TestActivities,
    );
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const post = (
      await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'Ship small, ship often.\nWhy we release every day.' } })
    ).body.data;
    const created = await call('POST', '/v1/media/generations', {
      body: { projectId: project.id, postId: post.id, wait_for_completion_ms: 20_000 },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const done = await finished(created.body.data);
    assert.equal(done.type, 'IMAGE_GENERATION');
    assert.equal(done.progress.progress, 1);
    assert.match(done.result.assetId, /^med_/);
    assert.equal(done.result.postId, post.id);
    const asset = (await call('GET', `/v1/media/${done.result.assetId}`)).body.data;
    assert.equal(asset.key, done.result.key);
    assert.equal(asset.mimeType, 'image/png');
    assert.equal(asset.width, 1200);
    assert.equal(asset.alt, 'Ship small, ship often.');
    // Deterministic: the same card drawn again has the same bytes.
    const expected = await renderQuoteCard({
      text: 'Ship small, ship often.',
      projectId: project.id,
      caption: project.display_name ?? undefined,
    });
    assert.equal(asset.sha256, sha256(expected));
    const stored = await objectStore().get(asset.key);
    assert.equal(sha256(stored!), asset.sha256);

    const read = (await call('GET', `/v1/posts/${post.id}`)).body.data;
    assert.ok(read);
    const row = await db()('posts').where({ id: post.id }).first();
    assert.deepEqual(
      row.media.images.map((i: { key: string }) => i.key),
      [asset.key],
    );
    const events = await db()('outbox_events')
      .where({ workspace_id: ws.workspace.id, type: 'job.completed' })
      .andWhereRaw(`data->'job'->>'id' = ?`, [done.id]);
    assert.equal(events.length, 1);

    assert.equal(
      (await call('PATCH', `/v1/posts/${post.id}`, { body: { scheduledFor: new Date(Date.now() + 1000).toISOString() } })).status,
      200,
    );
    await waitFor(async () => (await db()('posts').where({ id: post.id }).first()).status === 'published', 40_000, 'published');
    const { posts } = await sim.listPosts({ reference: post.id });
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.images.length, 1);
    assert.equal(posts[0]!.images[0]!.sha256, asset.sha256);
    await stopWorker();
  });

  it('with an images API (the stub): its image becomes the asset and its cost is charged', async () => {
    const images = new OpenAiImageGenerator({
      baseUrl: stub.url,
      apiKey: 'k',
      model: 'stub-image',
      size: '1024x1024',
      timeoutMs: 10_000,
      costCents: 4,
    });
    const overrides = createImageGenerationActivities({ db: db(), images, store: objectStore });
    await startWorker(overrides as unknown as TestActivities);
    const created = await call('POST', '/v1/media/generations', {
      body: { projectId: ws.projects[0]!.id, prompt: 'A calm desk at dawn', style: 'photo', wait_for_completion_ms: 20_000 },
    });
    const done = await finished(created.body.data);
    const req = stub.requests.find((r) => r.path === '/v1/images/generations');
    assert.ok(req, 'the images API was called');
    assert.equal((req!.body as { model: string }).model, 'stub-image');
    assert.match((req!.body as { prompt: string }).prompt, /A calm desk at dawn/);
    assert.equal(done.result.postId, undefined);
    const asset = (await call('GET', `/v1/media/${done.result.assetId}`)).body.data;
    assert.equal(asset.alt, 'A calm desk at dawn');
    const row = await db()('jobs').where({ id: done.id }).first();
    assert.equal(row.cost_cents, 4);
    assert.ok(row.spend_settled_at);
    await stopWorker();
  });
});
