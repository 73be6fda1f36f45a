import assert from 'node:assert/strict';
import { createPublishingActivities } from '../../activities/publishing';
import { createApiDeps } from '../../api/deps';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { HttpNetworkClient } from '../../lib/network/client';
import { insertPost } from '../../lib/posts/write';
import { temporalClient } from '../../lib/temporal/client';
import { client, startApi, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connectedCompanyPage, connectedPersonalProject, simulator } from '../support/network';

// spec 2.6 / 3.4 and docs/publishing.md "The failure streak": each clause of the one rule,
// proved over the network simulator through each door that calls the network for a connection:
// PATCH scheduling verification (real HTTP), the health check activity and the publish
// activity (real Postgres; the activities called as the worker calls them). The clients here
// time out after TIMEOUT_MS so that the simulator's added latency is a real client timeout.

const TIMEOUT_MS = 400;
const SLOW_MS = 1_200;

describe('the connection failure streak (one rule for every door)', function () {
  this.timeout(60_000);
  const sim = simulator();
  const n = config.network;
  const network = new HttpNetworkClient({
    baseUrl: n.apiUrl!,
    apiVersion: n.apiVersion,
    clientId: n.clientId,
    clientSecret: n.clientSecret,
    timeoutMs: TIMEOUT_MS,
  });
  const activities = createPublishingActivities({ db: db(), network, temporal: temporalClient });
  let api: TestServer;
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  let call: ReturnType<typeof client>;

  before(async () => {
    // The API's network client is injected (api/deps.ts): this one times out quickly.
    api = await startApi(createApiDeps({ network }));
    ws = await workspaceWithKey({ projects: 0 });
    call = client(api.url, ws.key);
  });
  afterEach(async () => {
    await sim.clearFaults();
    await sim.setLatency({ ms: 0, operation: 'any' });
    await sim.setLatency({ ms: 0, operation: 'identity' });
    await sim.setLatency({ ms: 0, operation: 'createPost' });
  });
  after(async () => {
    await api.close();
  });

  async function connectionOf(projectId: string) {
    const p = await db()('projects').where({ id: projectId }).first('connection_id');
    return db()('network_connections').where({ id: p.connection_id }).first();
  }
  async function setStreak(projectId: string, failures: number) {
    const c = await connectionOf(projectId);
    await db()('network_connections')
      .where({ id: c.id })
      .update({ consecutive_failures: failures, connection_status: failures ? 'DEGRADED' : 'CONNECTED' });
  }
  async function draftIn(projectId: string) {
    return (await call('POST', '/v1/posts', { body: { projectId, content: 'Draft' } })).body.data.id as string;
  }
  const future = () => new Date(Date.now() + 3_600_000).toISOString();
  /** A post scheduled for tomorrow, written directly (no workflow), for the publish activity to fire now. */
  async function scheduledPost(projectId: string) {
    const { post } = await db().transaction((trx) =>
      insertPost(trx, {
        workspaceId: ws.workspace.id,
        projectId,
        content: `Post ${Math.random()}`,
        contentType: 'PERSONAL',
        scheduledAt: new Date(Date.now() + 86_400_000),
      }),
    );
    return { postId: post.id, version: post.schedule_version, attempt: 1, retryUntilMs: Date.now() + 60_000 };
  }

  describe('4. a timeout neither counts nor resets', () => {
    it('PATCH verification: 503 temporarily_unavailable, streak unchanged, post unchanged', async () => {
      const { project } = await connectedPersonalProject(ws.workspace.id);
      await setStreak(project.id, 1);
      const id = await draftIn(project.id);
      await sim.setLatency({ ms: SLOW_MS, operation: 'identity' });
      const r = await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: future() } });
      assert.equal(r.status, 503, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'temporarily_unavailable');
      assert.equal(r.headers.get('retry-after'), '5');
      const c = await connectionOf(project.id);
      assert.equal(c.consecutive_failures, 1);
      assert.equal(c.connection_status, 'DEGRADED');
      assert.equal((await db()('posts').where({ id }).first()).status, 'draft');
    });

    it('health check: not ok, streak unchanged', async () => {
      const { project } = await connectedPersonalProject(ws.workspace.id);
      await setStreak(project.id, 2);
      await sim.setLatency({ ms: SLOW_MS, operation: 'identity' });
      for (let i = 0; i < 3; i++) {
        const r = await activities.checkConnection(project.id);
        assert.deepEqual({ ok: r.ok, failures: r.failures }, { ok: false, failures: null });
      }
      const c = await connectionOf(project.id);
      assert.equal(c.consecutive_failures, 2, 'three timed-out checks do not revoke');
      assert.equal(c.connection_status, 'DEGRADED');
    });

    it('publish: a transient outcome, delivery retrying, streak unchanged (a 503 likewise)', async () => {
      const { project, token } = await connectedPersonalProject(ws.workspace.id);
      await setStreak(project.id, 2);
      await sim.setLatency({ ms: SLOW_MS, operation: 'createPost' });
      const timedOut = await scheduledPost(project.id);
      const out = await activities.publishPost(timedOut);
      assert.deepEqual(out, { outcome: 'transient', error: 'timeout', retryAfterMs: null });
      const row = await db()('posts').where({ id: timedOut.postId }).first();
      assert.equal(row.status, 'scheduled');
      assert.equal(row.delivery.state, 'retrying');
      await sim.setLatency({ ms: 0, operation: 'createPost' });
      await sim.addFault({ kind: 'transient', operation: 'createPost', times: 1, status: 503, accessToken: token.accessToken });
      assert.equal((await activities.publishPost(await scheduledPost(project.id))).outcome, 'transient');
      const c = await connectionOf(project.id);
      assert.equal(c.consecutive_failures, 2);
      assert.equal(c.connection_status, 'DEGRADED');
    });
  });

  describe('4. a transient failure shows: degraded, naming the outage, until the next success', () => {
    it('a 503 on PATCH verification, then a timed-out publish; a success returns the connection to connected', async () => {
      const { project, token } = await connectedPersonalProject(ws.workspace.id);
      const block = async () => (await call('GET', `/v1/projects/${project.id}`)).body.data.network;
      const id = await draftIn(project.id);
      // The fault meets this project's calls only: an identity call of another suite's connection (a health check) must not take it.
      await sim.addFault({ kind: 'transient', operation: 'identity', times: 1, status: 503, accessToken: token.accessToken });
      assert.equal((await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: future() } })).status, 503);
      let b = await block();
      assert.deepEqual([b.state, b.canPublish, b.connectionStatus, b.reconnectUrl], ['degraded', true, 'DEGRADED', null]);
      assert.match(b.detail, /unavailable/);
      assert.equal((await connectionOf(project.id)).consecutive_failures, 0, 'not counted');

      await sim.setLatency({ ms: SLOW_MS, operation: 'createPost' });
      assert.equal((await activities.publishPost(await scheduledPost(project.id))).outcome, 'transient');
      b = await block();
      assert.equal(b.state, 'degraded');
      assert.match(b.detail, /did not answer in time/, 'the latest outage is the one named');
      await sim.setLatency({ ms: 0, operation: 'createPost' });

      const ok = await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: future() } });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      b = await block();
      assert.deepEqual([b.state, b.detail, b.reconnectUrl, b.connectionStatus], ['connected', null, null, 'CONNECTED']);
    });
  });

  describe('2. a refused credential counts, across doors, and the third consecutive one revokes', () => {
    it('PATCH, then the health check, then a publish: 1, 2, 3 → REVOKED', async () => {
      const { project, token } = await connectedPersonalProject(ws.workspace.id);
      const pending = await scheduledPost(project.id);
      await sim.revokeToken({ token: token.accessToken });

      const r = await call('PATCH', `/v1/posts/${await draftIn(project.id)}`, { body: { scheduledFor: future() } });
      assert.equal(r.status, 409);
      assert.equal(r.body.error.details.reason, 'revoked');
      let c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [1, 'DEGRADED']);

      const h = await activities.checkConnection(project.id);
      assert.deepEqual({ ok: h.ok, failures: h.failures }, { ok: false, failures: 2 });
      c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [2, 'DEGRADED']);

      const p = await activities.publishPost(pending);
      assert.equal(p.outcome, 'failed');
      c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [3, 'REVOKED']);
      assert.ok(c.revoked_at);
      const block = (await call('GET', `/v1/projects/${project.id}`)).body.data.network;
      assert.equal(block.state, 'revoked');
    });

    it('a company page with no admin left counts on every door that probes', async () => {
      const { page } = await connectedCompanyPage(ws.workspace.id, 'none');
      const r = await call('PATCH', `/v1/posts/${await draftIn(page.id)}`, { body: { scheduledFor: future() } });
      assert.equal(r.body.error.details.reason, 'no_admins');
      assert.equal((await activities.checkConnection(page.id)).failures, 2);
      assert.equal((await connectionOf(page.id)).last_error, 'no_admins');
    });
  });

  describe('1. a success resets', () => {
    it('on PATCH verification, the health check and a publish', async () => {
      const { project } = await connectedPersonalProject(ws.workspace.id);
      await setStreak(project.id, 2);
      const r = await call('PATCH', `/v1/posts/${await draftIn(project.id)}`, { body: { scheduledFor: future() } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      let c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [0, 'CONNECTED']);
      assert.ok(c.last_validated_at);

      await setStreak(project.id, 2);
      assert.deepEqual((await activities.checkConnection(project.id)).failures, 0);
      c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [0, 'CONNECTED']);

      await setStreak(project.id, 2);
      assert.equal((await activities.publishPost(await scheduledPost(project.id))).outcome, 'published');
      c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [0, 'CONNECTED']);
    });
  });

  describe('3. a refresh the network refuses revokes at once', () => {
    it('on PATCH verification (409 token_refresh_failed) and on the health check', async () => {
      for (const door of ['patch', 'health'] as const) {
        const { project, token } = await connectedPersonalProject(ws.workspace.id);
        const c0 = await connectionOf(project.id);
        // The stored token lapses (a refresh is due) and the network has withdrawn the grant.
        await db()('network_connections')
          .where({ id: c0.id })
          .update({ access_token_expires_at: new Date(Date.now() - 1000) });
        await sim.revokeToken({ token: token.accessToken });
        if (door === 'patch') {
          const r = await call('PATCH', `/v1/posts/${await draftIn(project.id)}`, { body: { scheduledFor: future() } });
          assert.equal(r.status, 409);
          assert.equal(r.body.error.details.reason, 'token_refresh_failed');
        } else {
          assert.equal((await activities.checkConnection(project.id)).ok, false);
        }
        const c = await connectionOf(project.id);
        assert.deepEqual([c.consecutive_failures, c.connection_status], [1, 'REVOKED'], door);
      }
    });
  });

  describe('5. the network refusing the post itself does not count', () => {
    it('publish: failed_to_publish, streak unchanged', async () => {
      const { project, token } = await connectedPersonalProject(ws.workspace.id);
      await setStreak(project.id, 2);
      // Scoped to this account's token: another publish reaching the run's simulator meanwhile
      // must not take it.
      await sim.addFault({ kind: 'permanent', operation: 'createPost', times: 1, status: 422, accessToken: token.accessToken });
      const out = await activities.publishPost(await scheduledPost(project.id));
      assert.equal(out.outcome, 'failed');
      const c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [2, 'DEGRADED']);
    });
  });

  describe('6. no call made does not count', () => {
    it('health check of a connection whose token lapsed without a refresh token', async () => {
      const { project } = await connectedPersonalProject(ws.workspace.id);
      await setStreak(project.id, 1);
      const c0 = await connectionOf(project.id);
      await db()('network_connections')
        .where({ id: c0.id })
        .update({ access_token_expires_at: new Date(Date.now() - 1000), refresh_token_enc: null });
      const callsBefore = (await sim.counts()).calls;
      const r = await activities.checkConnection(project.id);
      assert.deepEqual({ ok: r.ok, failures: r.failures }, { ok: false, failures: null });
      assert.deepEqual((await sim.counts()).calls, callsBefore, 'no network call');
      assert.equal((await connectionOf(project.id)).consecutive_failures, 1);
    });
  });
});
