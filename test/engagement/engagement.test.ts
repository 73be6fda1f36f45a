import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { randomBase62 } from '../../lib/ids';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { createProject } from '../../admin/provision';
import { connectedPersonalProject as connectSimulated } from '../../admin/simulatedAccounts';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { engagementStatusQuery } from '../../workflows/engagePost';
import { DEFAULT_ENGAGEMENT_COMMENTS } from '../../activities/engagement';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { maybeRecordHistory } from '../support/histories';
import { connectedPersonalProject, simulator } from '../support/network';
import { waitFor } from '../support/wait';
import { inSeconds } from '../support/time';

// Engagement after publish (docs/engagement.md; spec 2.5 AMPLIFIER, 4.4 autoLike / autoComment)
// over real HTTP, Postgres, Temporal and the network simulator, which records every like and comment.

describe('engagement after publish (real HTTP, Temporal, simulator)', function () {
  this.timeout(120_000);
  const api = useApi();
  let worker: ServiceWorker;
  let running: Promise<void>;
  const sim = simulator();
  const delays = { ...config.engagement };

  async function startWorker() {
    ({ worker } = await createWorker());
    running = worker.run();
  }
  before(async () => {
    // Short jittered delays (the defaults are minutes).
    Object.assign(config.engagement, { minDelaySeconds: 1, maxDelaySeconds: 3 });
    await startWorker();
  });
  afterEach(async () => {
    await sim.clearFaults();
  });
  after(async () => {
    worker.shutdown();
    await running;
    Object.assign(config.engagement, delays);
  });

  async function amplifier(workspaceId: string, connected = true) {
    const name = `Amp ${randomBase62(4)}`;
    if (!connected) return { project: await createProject({ workspaceId, type: 'AMPLIFIER', name, connection: 'none' }), personUrn: null };
    const personId = `a${randomBase62(10)}`;
    const { project } = await connectSimulated(sim, workspaceId, {
      personId,
      name: `Amp ${personId}`,
      projectName: name,
      type: 'AMPLIFIER',
    });
    return { project, personUrn: `urn:li:person:${personId}` };
  }

  async function team() {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const amps = [await amplifier(ws.workspace.id), await amplifier(ws.workspace.id)];
    const offline = await amplifier(ws.workspace.id, false);
    return { ...ws, project, amps, offline, call: client(api.url, ws.key) };
  }

  async function publish(t: Awaited<ReturnType<typeof team>>, flags: { autoLike?: boolean; autoComment?: boolean }) {
    const id = (await t.call('POST', '/v1/posts', { body: { projectId: t.project.id, content: `Launch ${randomBase62(6)}` } })).body.data
      .id;
    const patched = await t.call('PATCH', `/v1/posts/${id}`, { body: { ...flags, scheduledFor: inSeconds(2) } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const row = await waitFor(
      async () => {
        const r = await db()('posts').where({ id }).first();
        return r.status === 'published' && r;
      },
      30_000,
      'published',
    );
    return { id, urn: row.network_post_urn as string };
  }

  it('each amplifier likes and comments exactly once after a jittered delay, across a worker restart; accounts that cannot publish are skipped', async () => {
    const t = await team();
    // The first like's answer is lost after the network recorded it: the retry must not like twice.
    await sim.addFault({ kind: 'lost_response', operation: 'like', times: 1 });
    const { id, urn } = await publish(t, { autoLike: true, autoComment: true });
    const handle = (await temporalClient()).workflow.getHandle(workflowIds.engagement(id));
    const planned = await waitFor(
      async () => {
        const s = await handle.query(engagementStatusQuery).catch(() => null);
        return s && s.planned > 0 && s;
      },
      20_000,
      'engagement planned',
    );
    assert.equal(planned.planned, 4);
    // The worker goes away while the jittered timers are pending; a new one finishes the work.
    worker.shutdown();
    await running;
    await startWorker();
    const status = await handle.result();
    assert.deepEqual(status, { planned: 4, done: 4, skipped: 0, failed: 0 });

    const seen = await sim.listEngagement(urn);
    assert.deepEqual(seen.likes.map((l) => l.actor).sort(), t.amps.map((a) => a.personUrn).sort());
    assert.deepEqual(seen.comments.map((c) => c.actor).sort(), t.amps.map((a) => a.personUrn).sort());
    for (const c of seen.comments) assert.ok(DEFAULT_ENGAGEMENT_COMMENTS.includes(c.text), c.text);
    assert.ok(
      seen.likes.some((l) => l.calls === 2),
      'the lost answer was retried and the network kept one like',
    );
    // Jittered: nothing before the minimum delay after the publish.
    const publishedAt = (await db()('posts').where({ id }).first('published_at')).published_at.getTime();
    for (const l of seen.likes)
      assert.ok(Date.parse(l.at) >= publishedAt + 900, `liked ${Date.parse(l.at) - publishedAt} ms after publish`);

    const rows = await db()('post_engagements').where({ post_id: id }).select('project_id', 'kind', 'state');
    assert.equal(rows.filter((r) => r.state === 'done').length, 4);
    assert.deepEqual(
      rows
        .filter((r) => r.state === 'skipped')
        .map((r) => [r.project_id, r.kind])
        .sort(),
      [
        [t.offline.project.id, 'comment'],
        [t.offline.project.id, 'like'],
      ],
    );
    await maybeRecordHistory(workflowIds.engagement(id), 'engagePost-liked-and-commented');
    await maybeRecordHistory(workflowIds.publish(id), 'publishPost-published-with-engagement');
  });

  it('only likes with autoLike alone, and nothing at all with both flags off', async () => {
    const t = await team();
    const liked = await publish(t, { autoLike: true });
    // The row says published inside the publish step; the workflow starts the engagement child
    // when that step's workflow task completes, so wait for the publish workflow first.
    await (await temporalClient()).workflow.getHandle(workflowIds.publish(liked.id)).result();
    const status = await (await temporalClient()).workflow.getHandle(workflowIds.engagement(liked.id)).result();
    assert.deepEqual(status, { planned: 2, done: 2, skipped: 0, failed: 0 });
    assert.equal((await sim.listEngagement(liked.urn)).comments.length, 0);

    const quiet = await publish(t, {});
    await (await temporalClient()).workflow.getHandle(workflowIds.publish(quiet.id)).result();
    await assert.rejects((await temporalClient()).workflow.getHandle(workflowIds.engagement(quiet.id)).describe(), /not found/i);
    const seen = await sim.listEngagement(quiet.urn);
    assert.deepEqual([seen.likes.length, seen.comments.length], [0, 0]);
  });
});
