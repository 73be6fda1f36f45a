import assert from 'node:assert/strict';
import type { NativeConnection } from '@temporalio/worker';
import { addMember, createProject, createWorkspace, issueApiKey, makeAgencyOwner } from '../../admin/provision';
import { clearReachCache } from '../../api/oauth/reach';
import { wireValues, withRecordedStatements } from '../../bench/harness/statements';
import { BEST_TIMES_POSTS } from '../../lib/analytics/overview';
import { nextSyncAt, rebuildDailyGains, syncDueMetrics } from '../../lib/analytics/sync';
import { ensureMetricsSync } from '../../lib/temporal/start/metricsSync';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { newId, randomBase62 } from '../../lib/ids';
import { createNetworkClient } from '../../lib/network/client';
import { temporalClient } from '../../lib/temporal/client';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { client } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { connectedPersonalProject, simulator } from '../support/network';
import { maybeRecordHistory } from '../support/histories';
import { waitFor } from '../support/wait';
import { register, startOAuthApi, tokenFor } from '../oauth/support';

// Analytics end to end (docs/analytics.md): the metrics-sync workflow on the real Temporal dev
// server reads the simulator's growing metrics into Postgres; the overview, post analytics,
// cross-workspace overview and viral search serve them over real HTTP.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Posts the simulator holds for `personId`, and matching published rows in Postgres. */
async function publishedOnNetwork(
  ws: { id: string },
  project: { id: string },
  personId: string,
  ages: number[],
  opts: { metrics?: Array<{ impressions: number; likes: number; comments: number; reshares: number }> } = {},
) {
  const sim = simulator();
  const seeded = await sim.seedPosts({ author: `urn:li:person:${personId}`, count: ages.length, text: 'seeded' });
  const first = Number(seeded.firstPostUrn.split(':').pop());
  const urns = ages.map((_, i) => `urn:li:share:${first + i}`);
  const rows = ages.map((age, i) => ({
    id: newId('post'),
    workspace_id: ws.id,
    project_id: project.id,
    status: 'published',
    title: `Post ${i}`,
    content: 'x',
    content_type: 'PERSONAL',
    network_post_urn: urns[i],
    published_at: new Date(Date.now() - age),
    created_at: new Date(Date.now() - age - HOUR),
  }));
  await db()('posts').insert(rows);
  if (opts.metrics) for (let i = 0; i < urns.length; i++) await sim.setPostMetrics(urns[i]!, opts.metrics[i]!);
  return rows.map((r, i) => ({ id: r.id, urn: urns[i]! }));
}

describe('analytics', function () {
  this.timeout(120_000);
  let api: Awaited<ReturnType<typeof startOAuthApi>>;
  const saved = { ...config.analytics };
  before(async () => {
    api = await startOAuthApi();
  });
  after(async () => {
    Object.assign(config.analytics, saved);
    await simulator().setMetricsGrowth({ enabled: false });
    api.restore();
    await api.close();
  });

  it("decays the cadence with the post's age", () => {
    const now = new Date('2031-01-10T00:00:00Z');
    const at = (ageH: number) => nextSyncAt(new Date(now.getTime() - ageH * HOUR), now, 1);
    assert.equal(at(1)!.getTime() - now.getTime(), HOUR);
    assert.equal(at(30)!.getTime() - now.getTime(), 6 * HOUR);
    assert.equal(at(10 * 24)!.getTime() - now.getTime(), DAY);
    assert.equal(at(60 * 24)!.getTime() - now.getTime(), 7 * DAY);
    assert.equal(at(91 * 24), null, 'no sampling after 90 days');
    // The divisor compresses time: a second-old post is an hour old, due again in an hour, a second.
    assert.equal(nextSyncAt(new Date(now.getTime() - 1_000), now, 3600)!.getTime() - now.getTime(), 1_000);
    assert.equal(nextSyncAt(new Date(now.getTime() - 91 * 24 * 1_000), now, 3600), null);
  });

  describe('the metrics-sync workflow (real Temporal, simulator metrics growing over time)', () => {
    let worker: ServiceWorker;
    let connection: NativeConnection;
    let running: Promise<void>;
    const workflowId = `metrics-sync-test-${randomBase62(6)}`;
    before(async () => {
      // An hour of cadence is a second here, and a simulated hour passes every real second.
      Object.assign(config.analytics, { cadenceDivisor: 3600, syncIntervalSeconds: 1 });
      await simulator().setMetricsGrowth({ enabled: true, timeScale: 3600 });
      ({ worker, connection } = await createWorker());
      running = worker.run();
      await ensureMetricsSync(await temporalClient(), { workflowId, intervalSeconds: 1, batch: 200 });
    });
    after(async () => {
      // The run so far (several passes and their sleeps) is the replay suite's history.
      await maybeRecordHistory(workflowId, 'metricsSync-passes');
      await (
        await temporalClient()
      ).workflow
        .getHandle(workflowId)
        .terminate('test over')
        .catch(() => {});
      worker.shutdown();
      await running;
      await connection.close();
      await simulator().setMetricsGrowth({ enabled: false });
      Object.assign(config.analytics, saved);
    });

    it('samples published posts repeatedly; metrics grow; the overview and post list serve them', async () => {
      const ws = await workspaceWithKey();
      const { project, personId } = await connectedPersonalProject(ws.workspace.id, { timezone: 'Europe/Paris' });
      // Published moments ago: with time compressed 3600-fold they are hours old in a few seconds.
      const posts = await publishedOnNetwork(ws.workspace, project, personId, [0, 1_000, 2_000]);
      // Each post is sampled at least three times, and its counters only go up.
      await waitFor(
        async () => {
          const counts = await db()('post_metric_samples')
            .whereIn(
              'post_id',
              posts.map((p) => p.id),
            )
            .groupBy('post_id')
            .select('post_id', db().raw('count(*)::int as n'));
          return counts.length === 3 && counts.every((c: { n: number }) => c.n >= 3);
        },
        60_000,
        'three samples per post',
      );
      for (const p of posts) {
        const series = await db()('post_metric_samples').where({ post_id: p.id }).orderBy('sampled_at');
        for (let i = 1; i < series.length; i++)
          assert.ok(series[i].impressions >= series[i - 1].impressions, 'cumulative counters never go down');
        assert.ok(series[series.length - 1].impressions > series[0].impressions, `${p.urn} grew between samples`);
        const state = await db()('post_metric_state').where({ post_id: p.id }).first();
        assert.equal(state.sync_state, 'ok');
        assert.ok(state.next_sync_at > state.last_synced_at);
      }
      // What the network says now is what the API serves, after the sync catches up.
      const call = client(api.url, ws.key);
      const list = await call('GET', `/v1/analytics/posts?projectId=${project.id}&sort=impressions&order=desc`);
      assert.equal(list.status, 200, JSON.stringify(list.body));
      assert.equal(list.body.data.length, 3);
      const impressions = list.body.data.map((r: { impressions: number }) => r.impressions);
      assert.deepEqual(
        impressions,
        [...impressions].sort((a, b) => b - a),
      );
      for (const row of list.body.data) {
        const state = await db()('post_metric_state').where({ post_id: row.postId }).first();
        assert.equal(row.impressions, state.impressions);
        assert.equal(row.engagements, state.reactions + state.comments + state.reshares);
        assert.ok(row.impressions > 0);
        assert.equal(row.sync.state, 'ok');
        assert.ok(row.samples >= 3);
      }
      const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris' }).format(new Date());
      const overview = await call('GET', `/v1/analytics/overview?projectId=${project.id}&to=${today}`);
      assert.equal(overview.status, 200, JSON.stringify(overview.body));
      const o = overview.body.data;
      assert.equal(o.totals.posts, 3);
      assert.equal(
        o.totals.impressions,
        list.body.data.reduce((n: number, r: { impressions: number }) => n + r.impressions, 0),
      );
      assert.equal(o.daily.length, 30);
      // Daily gains add up to what was gained inside the period (every sample is in it).
      const gained = o.daily.reduce((n: number, d: { impressions: number }) => n + d.impressions, 0);
      assert.equal(gained, o.totals.impressions);
      // The daily gains the sync added up match a rebuild from the samples.
      const added = await db()('post_metric_days').where({ project_id: project.id }).orderBy('day');
      await rebuildDailyGains(db(), project.id);
      const rebuilt = await db()('post_metric_days').where({ project_id: project.id }).orderBy('day');
      assert.deepEqual(
        rebuilt.map((r: { impressions: number }) => r.impressions),
        added.map((r: { impressions: number }) => r.impressions),
      );
      assert.equal(o.bestPosts.length, 3);
      assert.ok(o.bestPosts[0].engagements >= o.bestPosts[2].engagements);
      assert.deepEqual(o.streak, { currentStreak: 1, longestStreak: 1 });
      assert.equal(o.sync.blockedPosts, 0);
      assert.ok(o.sync.lastSyncedAt);
    });
  });

  describe('failures of the network (sync passes run directly)', () => {
    beforeEach(() => {
      Object.assign(config.analytics, { cadenceDivisor: 1 });
    });

    it('a revoked connection: one failure per pass against it, posts blocked and visible', async () => {
      const ws = await workspaceWithKey();
      const { project, personId, token } = await connectedPersonalProject(ws.workspace.id);
      const posts = await publishedOnNetwork(ws.workspace, project, personId, [HOUR, 2 * HOUR, 3 * HOUR]);
      await simulator().revokeToken({ token: token.accessToken });
      const network = createNetworkClient();
      await syncDueMetrics({ db: db(), network }, { batch: 10_000, projectIds: [project.id] });
      const conn = await db()('projects as p')
        .join('network_connections as c', 'c.id', 'p.connection_id')
        .where('p.id', project.id)
        .first('c.consecutive_failures', 'c.connection_status');
      assert.equal(conn.consecutive_failures, 1, 'three posts, one failure counted');
      const states = await db()('post_metric_state').whereIn(
        'post_id',
        posts.map((p) => p.id),
      );
      assert.deepEqual(
        states.map((s: { sync_state: string }) => s.sync_state),
        ['blocked', 'blocked', 'blocked'],
      );
      const call = client(api.url, ws.key);
      const o = (await call('GET', `/v1/analytics/overview?projectId=${project.id}`)).body.data;
      assert.equal(o.sync.blockedPosts, 3);
      assert.match(o.sync.detail, /3 post/);
      const list = (await call('GET', `/v1/analytics/posts?projectId=${project.id}`)).body.data;
      assert.ok(list.every((r: { sync: { state: string; detail: string } }) => r.sync.state === 'blocked' && r.sync.detail));

      // Once revoked, the connection is not called at all.
      await db()('network_connections')
        .where({ id: (await db()('projects').where({ id: project.id }).first('connection_id')).connection_id })
        .update({ connection_status: 'REVOKED', revoked_at: new Date() });
      await db()('post_metric_state')
        .whereIn(
          'post_id',
          posts.map((p) => p.id),
        )
        .update({ next_sync_at: new Date(Date.now() - 1000) });
      const before = (await simulator().counts()).calls.metrics;
      await syncDueMetrics({ db: db(), network }, { batch: 10_000, projectIds: [project.id] });
      assert.equal((await simulator().counts()).calls.metrics, before);
    });

    /** The connection row of a project. */
    async function connectionOf(projectId: string) {
      return db()('projects as p')
        .join('network_connections as c', 'c.id', 'p.connection_id')
        .where('p.id', projectId)
        .first('c.id', 'c.consecutive_failures', 'c.connection_status', 'c.revoked_at');
    }
    async function dueAgain(posts: Array<{ id: string }>) {
      await db()('post_metric_state')
        .whereIn(
          'post_id',
          posts.map((p) => p.id),
        )
        .update({ next_sync_at: new Date(Date.now() - 1000) });
    }

    it('docs/publishing.md "The failure streak": three refused calls from the analytics path revoke like any others', async () => {
      const ws = await workspaceWithKey({ projects: 0 });
      const { project, personId, token } = await connectedPersonalProject(ws.workspace.id);
      const posts = await publishedOnNetwork(ws.workspace, project, personId, [HOUR]);
      await simulator().revokeToken({ token: token.accessToken });
      const network = createNetworkClient();
      const streak = async () => {
        const c = await connectionOf(project.id);
        return [c.consecutive_failures, c.connection_status];
      };
      await syncDueMetrics({ db: db(), network }, { batch: 10_000, projectIds: [project.id] });
      assert.deepEqual(await streak(), [1, 'DEGRADED']);
      await dueAgain(posts);
      await syncDueMetrics({ db: db(), network }, { batch: 10_000, projectIds: [project.id] });
      assert.deepEqual(await streak(), [2, 'DEGRADED']);
      // The third: a viral search through the same account, over HTTP.
      const call = client(api.url, ws.key);
      const refused = assertError(await call('GET', `/v1/viral-posts?query=ai&projectId=${project.id}`), 409, 'conflict');
      assert.equal(refused.details?.reason, 'no_usable_connection');
      const c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [3, 'REVOKED']);
      assert.ok(c.revoked_at);
      assert.equal((await call('GET', `/v1/projects/${project.id}`)).body.data.network.state, 'revoked');
    });

    it('a token refresh the network refuses during a sync revokes at once (rule 3), posts blocked', async () => {
      const ws = await workspaceWithKey({ projects: 0 });
      const { project, personId, token } = await connectedPersonalProject(ws.workspace.id);
      const posts = await publishedOnNetwork(ws.workspace, project, personId, [HOUR, 2 * HOUR]);
      // The stored token lapses (a refresh is due) and the network has withdrawn the grant.
      await db()('network_connections')
        .where({ id: (await connectionOf(project.id)).id })
        .update({ access_token_expires_at: new Date(Date.now() - 1000) });
      await simulator().revokeToken({ token: token.accessToken });
      const before = (await simulator().counts()).calls.metrics;
      const r = await syncDueMetrics({ db: db(), network: createNetworkClient() }, { batch: 10_000, projectIds: [project.id] });
      assert.equal(r.blocked, posts.length, JSON.stringify(r));
      assert.equal((await simulator().counts()).calls.metrics, before, 'no metrics call without a token');
      const c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [1, 'REVOKED']);
    });

    it('a viral search the network refuses for a lapsed grant revokes at once too', async () => {
      const ws = await workspaceWithKey({ projects: 0 });
      const { project, token } = await connectedPersonalProject(ws.workspace.id);
      await db()('network_connections')
        .where({ id: (await connectionOf(project.id)).id })
        .update({ access_token_expires_at: new Date(Date.now() - 1000) });
      await simulator().revokeToken({ token: token.accessToken });
      assertError(await client(api.url, ws.key)('GET', `/v1/viral-posts?query=ai&projectId=${project.id}`), 409, 'conflict');
      const c = await connectionOf(project.id);
      assert.deepEqual([c.consecutive_failures, c.connection_status], [1, 'REVOKED']);
    });

    it('rate limiting defers the posts without counting against the connection; a post gone from the network stops', async () => {
      const ws = await workspaceWithKey();
      const { project, personId } = await connectedPersonalProject(ws.workspace.id);
      const posts = await publishedOnNetwork(ws.workspace, project, personId, [HOUR, 2 * HOUR], {
        metrics: [
          { impressions: 100, likes: 5, comments: 1, reshares: 0 },
          { impressions: 300, likes: 9, comments: 2, reshares: 1 },
        ],
      });
      const sim = simulator();
      await sim.addFault({ kind: 'transient', status: 429, retryAfterSeconds: 30, operation: 'metrics', times: 1 });
      const network = createNetworkClient();
      const r1 = await syncDueMetrics({ db: db(), network }, { batch: 10_000, concurrency: 1, projectIds: [project.id] });
      assert.ok(r1.deferred >= 1, JSON.stringify(r1));
      const conn = await db()('projects as p')
        .join('network_connections as c', 'c.id', 'p.connection_id')
        .where('p.id', project.id)
        .first('c.consecutive_failures');
      assert.equal(conn.consecutive_failures, 0);
      // spec 2.6: the outage shows (degraded, still able to publish) without counting.
      const call = client(api.url, ws.key);
      const degraded = (await call('GET', `/v1/projects/${project.id}`)).body.data.network;
      assert.equal(degraded.state, 'degraded');
      assert.equal(degraded.canPublish, true);
      assert.match(degraded.detail, /rate limited/);
      assert.equal(degraded.reconnectUrl, null);
      const deferred = await db()('post_metric_state')
        .whereIn(
          'post_id',
          posts.map((p) => p.id),
        )
        .whereNull('last_synced_at');
      for (const d of deferred) assert.ok(d.next_sync_at.getTime() > Date.now() + 20_000, 'Retry-After is honoured');

      // A post the network no longer has: failed, never asked again.
      await db()('posts').where({ id: posts[0]!.id }).update({ network_post_urn: 'urn:li:share:1' });
      await db()('post_metric_state').where({ post_id: posts[0]!.id }).update({ network_post_urn: 'urn:li:share:1' });
      await db()('post_metric_state')
        .whereIn(
          'post_id',
          posts.map((p) => p.id),
        )
        .update({ next_sync_at: new Date(Date.now() - 1000) });
      await syncDueMetrics({ db: db(), network }, { batch: 10_000, projectIds: [project.id] });
      const gone = await db()('post_metric_state').where({ post_id: posts[0]!.id }).first();
      assert.equal(gone.sync_state, 'failed');
      assert.equal(gone.next_sync_at, null);
      const kept = await db()('post_metric_state').where({ post_id: posts[1]!.id }).first();
      assert.equal(kept.sync_state, 'ok');
      assert.equal(Number(kept.impressions), 300);
      assert.equal(Number(kept.reactions), 9);
      // The next successful pass clears the outage.
      const recovered = (await call('GET', `/v1/projects/${project.id}`)).body.data.network;
      assert.deepEqual([recovered.state, recovered.detail], ['connected', null]);
    });
  });

  describe('reading analytics', () => {
    /** Posts with metrics written straight into the state table (the sync is tested above). */
    async function withMetrics(
      rows: Array<{ at: Date; impressions: number; reactions: number; comments?: number; reshares?: number }>,
      timezone = 'UTC',
    ) {
      const ws = await workspaceWithKey({ timezone });
      const project = ws.project;
      const ids: string[] = [];
      for (const r of rows) {
        const id = newId('post');
        ids.push(id);
        await db()('posts').insert({
          id,
          workspace_id: ws.workspace.id,
          project_id: project.id,
          status: 'published',
          title: `at ${r.at.toISOString()}`,
          content: 'x',
          content_type: 'PERSONAL',
          network_post_urn: `urn:li:share:${Math.floor(Math.random() * 1e12)}`,
          published_at: r.at,
        });
        await db()('post_metric_state').insert({
          post_id: id,
          workspace_id: ws.workspace.id,
          project_id: project.id,
          network_post_urn: 'urn:li:share:1',
          published_at: r.at,
          impressions: r.impressions,
          reactions: r.reactions,
          comments: r.comments ?? 0,
          reshares: r.reshares ?? 0,
          samples: 1,
          sync_state: 'ok',
          last_synced_at: new Date(),
          next_sync_at: null,
        });
        await db()('post_metric_samples').insert({
          post_id: id,
          workspace_id: ws.workspace.id,
          project_id: project.id,
          sampled_at: new Date(r.at.getTime() + HOUR),
          impressions: r.impressions,
          reactions: r.reactions,
          comments: r.comments ?? 0,
          reshares: r.reshares ?? 0,
        });
      }
      await rebuildDailyGains(db(), project.id);
      return { ...ws, ids, call: client(api.url, ws.key) };
    }

    it(`best times read the project's latest ${BEST_TIMES_POSTS} synced posts, not older ones`, async () => {
      // The oldest posts (Sunday 03:00 UTC, 50 %) would lead every slot; the newest 1,000 (Tuesday
      // 10:00, 2 %) are all that is read.
      const w = await withMetrics([{ at: new Date('2030-01-06T03:00:00Z'), impressions: 100, reactions: 50 }]);
      const insertPosts = async (n: number, firstAt: string, reactions: number) =>
        db().raw(
          `with p as (
             insert into posts (id, workspace_id, project_id, status, title, content, content_type, network_post_urn, published_at)
             select 'post_bt' || md5(random()::text), ?, ?, 'published', '', 'x', 'PERSONAL', 'urn:li:share:' || g, ?::timestamptz + (g || ' weeks')::interval
             from generate_series(0, ? - 1) g
             returning id, published_at)
           insert into post_metric_state (post_id, workspace_id, project_id, network_post_urn, published_at, impressions, reactions, samples, sync_state)
           select id, ?, ?, 'urn:li:share:1', published_at, 100, ?, 1, 'ok' from p`,
          [w.workspace.id, w.project.id, firstAt, n, w.workspace.id, w.project.id, reactions],
        );
      await insertPosts(4, '2030-01-13T03:00:00Z', 50);
      await insertPosts(BEST_TIMES_POSTS, '2031-01-07T10:00:00Z', 2);
      const o = (await w.call('GET', `/v1/analytics/overview?projectId=${w.project.id}&from=2031-03-01&to=2031-03-07`)).body.data;
      assert.equal(o.bestTimes.sampleSize, BEST_TIMES_POSTS);
      assert.deepEqual(o.bestTimes.slots, [{ weekday: 'Tue', hour: 10, posts: BEST_TIMES_POSTS, averageEngagementRate: 0.02 }]);
    });

    it('overview: totals, previous period and trends, best posts, cadence, best times from 10 posts', async () => {
      const d = (s: string) => new Date(s);
      const w = await withMetrics([
        // Period 2031-03-01..2031-03-14: 10 posts; previous period 2031-02-15..2031-02-28: 2 posts.
        ...Array.from({ length: 8 }, (_, i) => ({ at: d(`2031-03-0${1 + (i % 7)}T09:15:00Z`), impressions: 1000, reactions: 10 })),
        { at: d('2031-03-10T17:00:00Z'), impressions: 1000, reactions: 90, comments: 10 },
        { at: d('2031-03-12T17:30:00Z'), impressions: 2000, reactions: 150, comments: 40, reshares: 10 },
        { at: d('2031-02-20T09:00:00Z'), impressions: 500, reactions: 5 },
        { at: d('2031-02-21T09:00:00Z'), impressions: 500, reactions: 5 },
      ]);
      const res = await w.call('GET', `/v1/analytics/overview?projectId=${w.project.id}&from=2031-03-01&to=2031-03-14`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const o = res.body.data;
      assert.deepEqual(o.totals, {
        posts: 10,
        impressions: 11000,
        reactions: 320,
        comments: 50,
        reshares: 10,
        engagements: 380,
        engagementRate: 0.0345,
      });
      assert.deepEqual(o.previousPeriod, {
        from: '2031-02-15',
        to: '2031-02-28',
        totals: { posts: 2, impressions: 1000, reactions: 10, comments: 0, reshares: 0, engagements: 10, engagementRate: 0.01 },
      });
      assert.equal(o.trends.posts, 4);
      assert.equal(o.trends.impressions, 10);
      assert.equal(o.trends.engagementRate, 0.0245);
      assert.deepEqual(
        o.bestPosts.map((p: { postId: string }) => p.postId),
        [w.ids[9], w.ids[8], ...o.bestPosts.slice(2).map((p: { postId: string }) => p.postId)],
      );
      assert.equal(o.bestPosts.length, 5);
      assert.deepEqual(o.cadence, { posts: 10, postsPerWeek: 5, activeWeeks: 2, weeks: 2 });
      assert.equal(o.daily.length, 14);
      assert.equal(o.daily.find((x: { date: string }) => x.date === '2031-03-12').posts, 1);
      assert.equal(o.daily.find((x: { date: string }) => x.date === '2031-03-12').impressions, 2000);
      // 12 posts of history: best times are shown, the 17:00 posts (10%) before the 09:00 ones (1%).
      assert.equal(o.bestTimes.minimumSample, 10);
      assert.equal(o.bestTimes.sampleSize, 12);
      assert.deepEqual(o.bestTimes.slots.slice(0, 2), [
        { weekday: 'Mon', hour: 17, posts: 1, averageEngagementRate: 0.1 },
        { weekday: 'Wed', hour: 17, posts: 1, averageEngagementRate: 0.1 },
      ]);
      assert.equal(o.bestTimes.slots[2].averageEngagementRate, 0.01);
      // Weeks of 2031-02-17, 02-24, 03-03 and 03-10: four in a row, long over by now.
      assert.deepEqual(o.streak, { currentStreak: 0, longestStreak: 4 });

      // Fewer than 10 posts: no best times, the sample size says why.
      const small = await withMetrics([{ at: d('2031-03-02T09:00:00Z'), impressions: 10, reactions: 1 }]);
      const s = (await small.call('GET', `/v1/analytics/overview?projectId=${small.project.id}&from=2031-03-01&to=2031-03-07`)).body.data;
      assert.deepEqual(s.bestTimes, { minimumSample: 10, sampleSize: 1, slots: null });
      assert.equal(s.trends.impressions, null, 'no previous period to compare with');

      assertError(
        await w.call('GET', `/v1/analytics/overview?projectId=${w.project.id}&from=2030-01-01&to=2031-03-01`),
        400,
        'invalid_request',
      );
      assertError(
        await w.call('GET', `/v1/analytics/overview?projectId=${w.project.id}&from=2031-03-05&to=2031-03-01`),
        400,
        'invalid_request',
      );
      assertError(await w.call('GET', '/v1/analytics/overview'), 400, 'invalid_request');
      const foreign = await workspaceWithKey();
      assertError(await w.call('GET', `/v1/analytics/overview?projectId=${foreign.project.id}`), 404, 'not_found');
    });

    it('post analytics: sortable by each metric, cursor-paginated, filters bound to the cursor', async () => {
      const base = Date.parse('2031-04-01T10:00:00Z');
      const w = await withMetrics(
        Array.from({ length: 7 }, (_, i) => ({
          at: new Date(base + i * DAY),
          impressions: [500, 100, 900, 300, 700, 200, 800][i]!,
          reactions: [15, 50, 9, 6, 70, 1, 32][i]!,
        })),
      );
      const all = async (sort: string, order?: string) => {
        const ids: string[] = [];
        let cursor: string | null = null;
        do {
          const res: { status: number; body: any } = await w.call(
            'GET',
            `/v1/analytics/posts?projectId=${w.project.id}&sort=${sort}${order ? `&order=${order}` : ''}&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
          );
          assert.equal(res.status, 200, JSON.stringify(res.body));
          ids.push(...res.body.data.map((r: { postId: string }) => r.postId));
          cursor = res.body.pagination.next_cursor;
        } while (cursor);
        return ids;
      };
      const i = w.ids;
      assert.deepEqual(await all('impressions'), [i[2], i[6], i[4], i[0], i[3], i[5], i[1]]);
      assert.deepEqual(await all('impressions', 'asc'), [i[1], i[5], i[3], i[0], i[4], i[6], i[2]]);
      assert.deepEqual(await all('reactions'), [i[4], i[1], i[6], i[0], i[2], i[3], i[5]]);
      assert.deepEqual(await all('engagementRate'), [i[1], i[4], i[6], i[0], i[3], i[2], i[5]]);
      assert.deepEqual(await all('publishedAt'), [...i].reverse());
      const first = await w.call('GET', `/v1/analytics/posts?projectId=${w.project.id}&sort=impressions&limit=2`);
      assertError(
        await w.call(
          'GET',
          `/v1/analytics/posts?projectId=${w.project.id}&sort=reactions&limit=2&cursor=${first.body.pagination.next_cursor}`,
        ),
        400,
        'bad_cursor',
      );
      assertError(await w.call('GET', `/v1/analytics/posts?projectId=${w.project.id}&sort=loudness`), 400, 'invalid_request');
      assertError(await w.call('GET', `/v1/analytics/posts?projectId=${w.project.id}&limit=0`), 400, 'bad_pagination');
      const ranged = await w.call('GET', `/v1/analytics/posts?projectId=${w.project.id}&from=2031-04-02&to=2031-04-03`);
      assert.deepEqual(
        ranged.body.data.map((r: { postId: string }) => r.postId),
        [i[2], i[1]],
      );
      const row = ranged.body.data[1];
      assert.deepEqual(
        { ...row, lastSyncedAt: null },
        {
          postId: i[1],
          title: row.title,
          publishedAt: '2031-04-02T10:00:00.000Z',
          networkPostUrn: row.networkPostUrn,
          impressions: 100,
          reactions: 50,
          comments: 0,
          reshares: 0,
          engagements: 50,
          engagementRate: 0.5,
          samples: 1,
          lastSyncedAt: null,
          sync: { state: 'ok', detail: null },
        },
      );
    });

    it('post analytics: the first page is read in publication order from an index, not sorted from every post', async () => {
      const w = await withMetrics(
        Array.from({ length: 3 }, (_, i) => ({
          at: new Date(Date.parse('2031-05-01T10:00:00Z') + i * DAY),
          impressions: 10,
          reactions: 1,
        })),
      );
      // The statement the API sends, as pg sends it (a prepared read or through knex alike;
      // bench/README.md, analytics).
      const { result: res, statements: all } = await withRecordedStatements(() =>
        w.call('GET', `/v1/analytics/posts?projectId=${w.project.id}`),
      );
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.data.map((p: { postId: string }) => p.postId),
        [...w.ids].reverse(),
      );
      const sent = all.filter((c) => /from "posts" as "p"/.test(c.text)).map((c) => ({ sql: c.text, bindings: wireValues(c) }));
      assert.equal(sent.length, 1);
      // Sequential scans off: on tables this small the planner would scan them whatever the
      // indexes; what matters is whether the page can come from an index in order.
      const plan = await db().transaction(async (trx) => {
        await trx.raw('set local enable_seqscan = off');
        // The event gives the statement in pg's numbered form ($1, $2, … in binding order).
        const r = await trx.raw(`explain ${sent[0]!.sql.replace(/\$\d+/g, '?')}`, sent[0]!.bindings as never);
        return (r.rows as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
      });
      assert.match(plan, /Index Scan Backward using posts_published/);
      assert.doesNotMatch(plan, /Sort/);
    });

    it('scope analytics:read; client role reads analytics but not viral posts', async () => {
      const w = await withMetrics([{ at: new Date('2031-03-02T09:00:00Z'), impressions: 10, reactions: 1 }]);
      const noAnalytics = client(api.url, (await issueApiKey({ workspaceId: w.workspace.id, scopes: ['posts:read'] })).key);
      assert.deepEqual(
        assertError(await noAnalytics('GET', `/v1/analytics/overview?projectId=${w.project.id}`), 403, 'scope_missing').details,
        { required_scope: 'analytics:read' },
      );
      assertError(await noAnalytics('GET', `/v1/analytics/posts?projectId=${w.project.id}`), 403, 'scope_missing');
      assertError(await noAnalytics('GET', '/v1/viral-posts?query=ai'), 403, 'scope_missing');
      assertError(await noAnalytics('GET', '/v1/analytics/cross-workspace/overview'), 403, 'scope_missing');

      const redirectUri = 'https://client.example.com/cb';
      const clientId = (await register(api.url, { client_name: 'Analytics client', redirect_uris: [redirectUri] })).body.client_id;
      const user = await member(w.workspace.id, 'Client', [w.project.id]);
      const access = (
        await tokenFor(api.url, {
          clientId,
          redirectUri,
          email: user.email,
          scope: 'read',
          access: 'read',
          workspace: w.workspace.id,
          project: w.project.id,
        })
      ).access_token;
      const asClient = client(api.url, access);
      const o = await asClient('GET', '/v1/analytics/overview?from=2031-03-01&to=2031-03-07');
      assert.equal(o.status, 200, JSON.stringify(o.body));
      assert.equal(o.body.data.projectId, w.project.id, 'the pinned default project');
      assert.equal((await asClient('GET', '/v1/analytics/posts')).status, 200);
      const viral = assertError(await asClient('GET', '/v1/viral-posts?query=ai'), 403, 'forbidden_project');
      assert.deepEqual(viral.details, { reason: 'client_role' });
    });

    it('cross-workspace overview: one row per workspace an agency owner reaches; an API key sees its own', async () => {
      const agency = await createWorkspace({ name: `Agency ${randomBase62(4)}`, plan: 'BUSINESS' });
      // A client workspace billed to the agency, with one project and one post published in the period.
      const clientWorkspace = async (n: number) => {
        const ws = await createWorkspace({ name: `Client ${n} ${randomBase62(4)}`, plan: 'FREE', billingWorkspaceId: agency.id });
        const p = await createProject({ workspaceId: ws.id, type: 'PERSONAL_BRAND', name: `Client person ${n}` });
        const id = newId('post');
        const at = new Date(Date.now() - 2 * DAY);
        await db()('posts').insert({
          id,
          workspace_id: ws.id,
          project_id: p.id,
          status: 'published',
          title: '',
          content: 'x',
          content_type: 'PERSONAL',
          network_post_urn: 'urn:li:share:5',
          published_at: at,
        });
        await db()('post_metric_state').insert({
          post_id: id,
          workspace_id: ws.id,
          project_id: p.id,
          network_post_urn: 'urn:li:share:5',
          published_at: at,
          impressions: 1000 * n,
          reactions: 10 * n,
          comments: n,
          reshares: 0,
          samples: 1,
          sync_state: 'ok',
        });
        return { ws, project: p };
      };
      const clients = [];
      for (const n of [1, 2]) clients.push((await clientWorkspace(n)).ws);
      // A workspace the owner belongs to whose own plan has no API access is left out.
      const freeWs = await createWorkspace({ name: `Free ${randomBase62(4)}`, plan: 'FREE' });
      const owner = await member(agency.id, 'Admin');
      await db()('memberships').insert({ id: newId('membership'), workspace_id: freeWs.id, user_id: owner.id, role: 'admin' });
      for (const c of clients) await makeAgencyOwner({ user: owner.email, clientWorkspaceId: c.id });
      const redirectUri = 'https://client.example.com/cb';
      const clientId = (await register(api.url, { client_name: 'Agency dashboard', redirect_uris: [redirectUri] })).body.client_id;
      const access = (
        await tokenFor(api.url, { clientId, redirectUri, email: owner.email, scope: 'read', access: 'read', workspace: agency.id })
      ).access_token;
      const res = await client(api.url, access)('GET', '/v1/analytics/cross-workspace/overview');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const byId = Object.fromEntries(res.body.data.workspaces.map((r: { workspaceId: string }) => [r.workspaceId, r]));
      assert.deepEqual(Object.keys(byId).sort(), [agency.id, ...clients.map((c) => c.id)].sort(), 'the FREE workspace is not listed');
      assert.equal(byId[agency.id].reach, 'member');
      assert.equal(byId[agency.id].posts, 0);
      assert.deepEqual(
        { ...byId[clients[1]!.id], name: undefined },
        {
          workspaceId: clients[1]!.id,
          name: undefined,
          reach: 'agency_owner',
          projects: 1,
          posts: 1,
          impressions: 2000,
          reactions: 20,
          comments: 2,
          reshares: 0,
          engagements: 22,
          engagementRate: 0.011,
        },
      );
      assert.equal(res.body.data.totals.impressions, 3000);
      assert.equal(res.body.data.totals.posts, 2);

      // The statements do not grow with the workspaces reached: each count below starts with
      // the reach cache empty, so every workspace's access is read too.
      const statementsOf = async () => {
        clearReachCache();
        const { result: r, statements: sent } = await withRecordedStatements(() =>
          client(api.url, access)('GET', '/v1/analytics/cross-workspace/overview'),
        );
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return { sent: sent.length, workspaces: r.body.data.workspaces as Array<{ workspaceId: string; projects: number; posts: number }> };
      };
      // A workspace where the owner is a plain member sees its assigned project only.
      const narrowed = await clientWorkspace(6);
      const unassigned = await createProject({ workspaceId: narrowed.ws.id, type: 'PERSONAL_BRAND', name: 'Not assigned' });
      await db()('posts').insert({
        id: newId('post'),
        workspace_id: narrowed.ws.id,
        project_id: unassigned.id,
        status: 'published',
        title: '',
        content: 'x',
        content_type: 'PERSONAL',
        published_at: new Date(Date.now() - 2 * DAY),
      });
      await db()('workspaces').where({ id: narrowed.ws.id }).update({ billing_workspace_id: null, plan: 'BUSINESS' });
      await addMember({ workspaceId: narrowed.ws.id, user: owner.id, role: 'member', projectIds: [narrowed.project.id] });
      const before = await statementsOf();
      for (const n of [3, 4, 5]) clients.push((await clientWorkspace(n)).ws);
      const after = await statementsOf();
      assert.equal(after.workspaces.length, before.workspaces.length + 3, JSON.stringify(after.workspaces));
      assert.equal(
        after.sent,
        before.sent,
        `${after.sent} statements for ${after.workspaces.length} workspaces, ${before.sent} for ${before.workspaces.length}`,
      );
      const row = after.workspaces.find((w) => w.workspaceId === narrowed.ws.id);
      assert.deepEqual({ projects: row?.projects, posts: row?.posts }, { projects: 1, posts: 1 }, 'the assigned project only');

      const key = (await issueApiKey({ workspaceId: clients[0]!.id, scopes: ['analytics:read'] })).key;
      const own = await client(api.url, key)('GET', '/v1/analytics/cross-workspace/overview');
      // FREE plans have no API access of their own (spec 1 rule 2).
      if (own.status === 200)
        assert.deepEqual(
          own.body.data.workspaces.map((r: { workspaceId: string }) => r.workspaceId),
          [clients[0]!.id],
        );
      else assertError(own, 403, 'plan_not_eligible');
      const ws = await workspaceWithKey({ scopes: ['analytics:read'] });
      const single = await client(api.url, ws.key)('GET', '/v1/analytics/cross-workspace/overview');
      assert.deepEqual(
        single.body.data.workspaces.map((r: { workspaceId: string; reach: string }) => [r.workspaceId, r.reach]),
        [[ws.workspace.id, 'member']],
      );
    });

    it('viral posts: keyword search ranked by engagement, with period and minimum-engagement filters', async () => {
      const ws = await workspaceWithKey();
      await connectedPersonalProject(ws.workspace.id);
      const word = `zq${randomBase62(8).toLowerCase()}`;
      const recent = new Date(Date.now() - 5 * DAY).toISOString();
      const old = new Date(Date.now() - 100 * DAY).toISOString();
      await simulator().addViralPosts([
        { authorName: 'Low', text: `${word} low`, publishedAt: recent, impressions: 1000, likes: 10, comments: 1, reshares: 0 },
        { authorName: 'High', text: `${word} high`, publishedAt: recent, impressions: 90_000, likes: 900, comments: 80, reshares: 20 },
        { authorName: 'Mid', text: `${word} mid`, publishedAt: old, impressions: 20_000, likes: 300, comments: 20, reshares: 5 },
      ]);
      const call = client(api.url, ws.key);
      const res = await call('GET', `/v1/viral-posts?query=${word}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(
        res.body.data.map((p: { author: { name: string } }) => p.author.name),
        ['High', 'Mid', 'Low'],
      );
      assert.deepEqual(
        res.body.data.map((p: { engagements: number }) => p.engagements),
        [1000, 325, 11],
      );
      assert.equal(res.body.data[0].engagementRate, 0.0111);
      assert.equal(res.body.meta.total, 3);
      const recentOnly = await call('GET', `/v1/viral-posts?query=${word}&from=${recent.slice(0, 10)}`);
      assert.deepEqual(
        recentOnly.body.data.map((p: { author: { name: string } }) => p.author.name),
        ['High', 'Low'],
      );
      const popular = await call('GET', `/v1/viral-posts?query=${word}&minEngagement=300`);
      assert.deepEqual(
        popular.body.data.map((p: { author: { name: string } }) => p.author.name),
        ['High', 'Mid'],
      );
      const two = await call('GET', `/v1/viral-posts?query=${encodeURIComponent(`${word} high`)}`);
      assert.deepEqual(
        two.body.data.map((p: { author: { name: string } }) => p.author.name),
        ['High'],
        'every word must match',
      );
      // The seeded corpus answers common topics, ranked.
      const seeded = await call('GET', '/v1/viral-posts?query=hiring&limit=10');
      assert.equal(seeded.body.data.length, 10);
      const e = seeded.body.data.map((p: { engagements: number }) => p.engagements);
      assert.deepEqual(
        e,
        [...e].sort((a: number, b: number) => b - a),
      );
      assertError(await call('GET', '/v1/viral-posts'), 400, 'invalid_request');
      assertError(await call('GET', '/v1/viral-posts?query=ai&limit=0'), 400, 'bad_pagination');

      // No connected account that can be used: 409 conflict, nothing sent to the network.
      const bare = await workspaceWithKey({ connection: 'none' });
      const refused = assertError(await client(api.url, bare.key)('GET', '/v1/viral-posts?query=ai'), 409, 'conflict');
      assert.equal(refused.details?.reason, 'no_usable_connection');
    });
  });
});
