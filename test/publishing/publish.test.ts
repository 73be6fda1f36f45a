import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { publishStatusQuery } from '../../workflows/publishPost';
import { maybeRecordHistory } from '../support/histories';
import { apiAndWorker } from '../support/stack';
import { connectedCompanyPage, connectedPersonalProject, simulator } from '../support/network';
import { waitFor } from '../support/wait';
import { inSeconds } from '../support/time';

describe('scheduled publishing (worker in-process, real Temporal and simulator)', function () {
  this.timeout(90_000);
  const stack = apiAndWorker();
  const sim = simulator();

  async function postStatus(id: string) {
    return db()('posts').where({ id }).first();
  }

  it('publishes a post scheduled a few seconds ahead exactly once', async () => {
    const { project, personId } = await connectedPersonalProject(stack.ws.workspace.id);
    const created = await stack.call('POST', '/v1/posts', {
      body: { projectId: project.id, content: 'Monday thoughts', scheduledFor: inSeconds(2) },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.data.status, 'scheduled');
    const id = created.body.data.id;
    const row = await waitFor(
      async () => {
        const r = await postStatus(id);
        return r.status === 'published' && r;
      },
      30_000,
      'published',
    );
    assert.ok(row.published_at.getTime() >= Date.parse(created.body.data.scheduledAt));
    const { posts } = await sim.listPosts({ reference: id });
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.createCalls, 1);
    assert.equal(posts[0]!.authorId, personId);
    assert.equal(posts[0]!.text, 'Monday thoughts');
    const events = await db()('outbox_events')
      .where({ workspace_id: stack.ws.workspace.id })
      .andWhereRaw(`data->'post'->>'id' = ?`, [id])
      .pluck('type');
    assert.ok(events.includes('post.published'));
    await maybeRecordHistory(workflowIds.publish(id), 'publishPost-published');
  });

  it("holds a new post's workflow in a start delay to its fire time: no task before it, one task that publishes", async () => {
    const { project } = await connectedPersonalProject(stack.ws.workspace.id);
    const created = await stack.call('POST', '/v1/posts', {
      body: { projectId: project.id, content: 'Held until due', scheduledFor: inSeconds(3) },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.data.id;
    const fireAt = Date.parse(created.body.data.scheduledAt); // PUBLISH_DELAY_SECONDS=0 in the suite
    const handle = (await temporalClient()).workflow.getHandle(workflowIds.publish(id));
    const early = (await handle.fetchHistory()).events ?? [];
    const start = early[0]!.workflowExecutionStartedEventAttributes!;
    assert.ok(Number(start.firstWorkflowTaskBackoff?.seconds ?? 0) > 0, 'started with a start delay');
    assert.ok(!early.some((e) => e.workflowTaskScheduledEventAttributes), 'no workflow task before the fire time');
    assert.ok((await handle.describe()).executionTime!.getTime() >= fireAt, 'the server holds it until the fire time');
    await waitFor(async () => (await postStatus(id)).status === 'published', 30_000, 'published');
    assert.ok((await postStatus(id)).published_at.getTime() >= fireAt, 'not before the fire time');
    assert.deepEqual(await handle.result(), { outcome: 'published', postUrn: (await postStatus(id)).network_post_urn });
    const events = (await handle.fetchHistory()).events ?? [];
    const ms = (t: unknown) => Number((t as { seconds: unknown }).seconds) * 1000 + ((t as { nanos?: number }).nanos ?? 0) / 1e6;
    const firstTask = events.find((e) => e.workflowTaskScheduledEventAttributes)!;
    assert.ok(ms(firstTask.eventTime) >= fireAt, 'the first workflow task is scheduled at the fire time');
    assert.equal(events.filter((e) => e.timerStartedEventAttributes).length, 0, 'no timer');
    assert.equal(events.filter((e) => e.workflowTaskCompletedEventAttributes).length, 1, 'one workflow task publishes');
    assert.equal((await sim.listPosts({ reference: id })).posts.length, 1);
    await maybeRecordHistory(workflowIds.publish(id), 'publishPost-delayed-start');
  });

  it('publishes as the organization for a company page', async () => {
    const { page, organizationId } = await connectedCompanyPage(stack.ws.workspace.id);
    const created = await stack.call('POST', '/v1/posts', {
      body: { projectId: page.id, content: 'Company news', scheduledFor: inSeconds(1) },
    });
    const id = created.body.data.id;
    await waitFor(async () => (await postStatus(id)).status === 'published', 30_000, 'published');
    const { posts } = await sim.listPosts({ reference: id });
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.author, `urn:li:organization:${organizationId}`);
  });

  it('reschedules through the same workflow and publishes once at the new time', async () => {
    const { project } = await connectedPersonalProject(stack.ws.workspace.id);
    const created = await stack.call('POST', '/v1/posts', {
      body: { projectId: project.id, content: 'Moved', scheduledFor: inSeconds(3) },
    });
    const id = created.body.data.id;
    const later = inSeconds(6);
    const patched = await stack.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: later } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    // The workflow's own answer that its timer moved to the new time, instead of waiting out the
    // old one (test/workflows/publishPost.test.ts proves that nothing fires at the old time).
    const handle = (await temporalClient()).workflow.getHandle(workflowIds.publish(id));
    const newFireAt = Date.parse(patched.body.data.scheduledAt);
    const moved = await waitFor(
      async () => {
        const s = await handle.query(publishStatusQuery);
        return s.fireAtMs === newFireAt && s;
      },
      20_000,
      'the timer to move',
    );
    assert.equal(moved.state, 'waiting');
    assert.equal(moved.fireAtMs, Date.parse(later));
    assert.equal((await postStatus(id)).status, 'scheduled', 'must not fire at the old time');
    await waitFor(async () => (await postStatus(id)).status === 'published', 30_000, 'published');
    assert.ok((await postStatus(id)).published_at.getTime() >= Date.parse(later));
    assert.equal((await sim.listPosts({ reference: id })).posts.length, 1);
    await maybeRecordHistory(workflowIds.publish(id), 'publishPost-rescheduled');
  });

  it('never publishes an unscheduled post', async () => {
    const { project } = await connectedPersonalProject(stack.ws.workspace.id);
    const created = await stack.call('POST', '/v1/posts', {
      body: { projectId: project.id, content: 'Not today', scheduledFor: inSeconds(2) },
    });
    const id = created.body.data.id;
    const patched = await stack.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: null } });
    assert.equal(patched.body.data.status, 'draft');
    assert.equal(patched.body.data.scheduledAt, null);
    // The workflow has ended without publishing, so nothing can publish later: no need to wait
    // out the old time (test/workflows/publishPost.test.ts covers the timer itself).
    const handle = (await temporalClient()).workflow.getHandle(workflowIds.publish(id));
    assert.deepEqual(await handle.result(), { outcome: 'not_scheduled' });
    assert.equal((await handle.query(publishStatusQuery)).state, 'done');
    assert.equal((await postStatus(id)).status, 'draft');
    assert.equal((await sim.listPosts({ reference: id })).posts.length, 0);
    assert.equal(await db()('calendar_slots').where({ post_id: id }).first(), undefined);
    await maybeRecordHistory(workflowIds.publish(id), 'publishPost-unscheduled');
  });

  it('leaves a sleeping workflow asleep for a move later and an unschedule: it reads the row when it wakes, and publishes once at the new time', async () => {
    // A lead of 2 s instead of a minute, so that the workflows wake within the test.
    const lead = config.publish.leaveAsleepLeadMs;
    config.publish.leaveAsleepLeadMs = 2_000;
    try {
      const { project } = await connectedPersonalProject(stack.ws.workspace.id);
      const create = async (content: string) =>
        (await stack.call('POST', '/v1/posts', { body: { projectId: project.id, content, scheduledFor: inSeconds(8) } })).body.data
          .id as string;
      const [moved, dropped] = [await create('Pushed back'), await create('Called off')];
      const later = inSeconds(12);
      assert.equal((await stack.call('PATCH', `/v1/posts/${moved}`, { body: { scheduledFor: later } })).status, 200);
      assert.equal((await stack.call('PATCH', `/v1/posts/${dropped}`, { body: { scheduledFor: null } })).status, 200);
      const client = await temporalClient();
      for (const id of [moved, dropped]) {
        const row = await postStatus(id);
        assert.equal(row.workflow_synced_version, row.schedule_version, 'the row counts the workflow as told');
        const events = (await client.workflow.getHandle(workflowIds.publish(id)).fetchHistory()).events ?? [];
        assert.equal(events.filter((e) => e.workflowExecutionSignaledEventAttributes).length, 1, "the create's signal-with-start only");
        assert.ok(!events.some((e) => e.workflowTaskScheduledEventAttributes), 'still in its start delay');
      }
      // Called off: the workflow wakes at the old time, finds the post off the schedule and ends.
      assert.deepEqual(await client.workflow.getHandle(workflowIds.publish(dropped)).result(), { outcome: 'not_scheduled' });
      assert.equal((await sim.listPosts({ reference: dropped })).posts.length, 0);
      // Pushed back: not published at the old time, once at the new one.
      assert.equal((await postStatus(moved)).status, 'scheduled', 'not at the old time');
      await waitFor(async () => (await postStatus(moved)).status === 'published', 30_000, 'published');
      assert.ok((await postStatus(moved)).published_at.getTime() >= Date.parse(later), 'not before the new time');
      assert.equal((await sim.listPosts({ reference: moved })).posts.length, 1);
      // The row is written by the publish step inside the workflow task: the history is whole once
      // the workflow has ended, not when the row says published.
      assert.equal((await client.workflow.getHandle(workflowIds.publish(moved)).result()).outcome, 'published');
      const history = (await client.workflow.getHandle(workflowIds.publish(moved)).fetchHistory()).events ?? [];
      assert.equal(history.filter((e) => e.timerStartedEventAttributes).length, 1, 'woken at the old time, it armed the new one');
      assert.equal(
        history.filter((e) => e.activityTaskScheduledEventAttributes).length,
        0,
        'the stale step handed back the row: no activity read it again',
      );
      assert.equal(history.filter((e) => e.workflowTaskCompletedEventAttributes).length, 2, 'a task at the old time, one at the new');
      await maybeRecordHistory(workflowIds.publish(moved), 'publishPost-left-asleep');
    } finally {
      config.publish.leaveAsleepLeadMs = lead;
    }
  });

  it('retries transient network failures and still publishes once', async () => {
    const { project } = await connectedPersonalProject(stack.ws.workspace.id);
    await sim.addFault({ kind: 'transient', operation: 'createPost', times: 2 });
    const created = await stack.call('POST', '/v1/posts', {
      body: { projectId: project.id, content: 'Flaky network', scheduledFor: inSeconds(1) },
    });
    const id = created.body.data.id;
    const retrying = await waitFor(
      async () => {
        const r = await postStatus(id);
        return r.delivery?.state === 'retrying' && r;
      },
      20_000,
      'retrying',
    );
    assert.equal(retrying.delivery.willRetry, true);
    assert.ok(Date.parse(retrying.delivery.retryUntil) > Date.now());
    await waitFor(async () => (await postStatus(id)).status === 'published', 40_000, 'published');
    assert.equal((await sim.listPosts({ reference: id })).posts.length, 1);
    await maybeRecordHistory(workflowIds.publish(id), 'publishPost-transient-retries');
  });

  it('recognises a post whose creation answer was lost, without posting twice', async () => {
    const { project } = await connectedPersonalProject(stack.ws.workspace.id);
    await sim.addFault({ kind: 'lost_response', operation: 'createPost', times: 1, lostAs: 'socket' });
    const created = await stack.call('POST', '/v1/posts', {
      body: { projectId: project.id, content: 'Lost answer', scheduledFor: inSeconds(1) },
    });
    const id = created.body.data.id;
    await waitFor(async () => (await postStatus(id)).status === 'published', 40_000, 'published');
    const { posts } = await sim.listPosts({ reference: id });
    assert.equal(posts.length, 1);
  });

  it('ends in failed_to_publish with a truthful delivery block when the token refresh fails', async () => {
    const { project, token } = await connectedPersonalProject(stack.ws.workspace.id);
    // The stored token lapses (forcing a refresh) and the network has withdrawn the grant.
    await db()('network_connections')
      .where({ id: (await db()('projects').where({ id: project.id }).first()).connection_id })
      .update({ access_token_expires_at: new Date(Date.now() - 1000) });
    await sim.revokeToken({ token: token.accessToken });
    const created = await stack.call('POST', '/v1/posts', {
      body: { projectId: project.id, content: 'Revoked', scheduledFor: inSeconds(1) },
    });
    const id = created.body.data.id;
    const row = await waitFor(
      async () => {
        const r = await postStatus(id);
        return r.status === 'failed_to_publish' && r;
      },
      30_000,
      'failed_to_publish',
    );
    assert.equal(row.delivery.state, 'failed');
    assert.equal(row.delivery.willRetry, false);
    assert.ok(row.last_publish_error);
    assert.ok(row.last_publish_attempt_at);
    assert.equal((await sim.listPosts({ reference: id })).posts.length, 0);
    await maybeRecordHistory(workflowIds.publish(id), 'publishPost-failed');
    const proj = await stack.call('GET', `/v1/projects/${project.id}`);
    assert.equal(proj.body.data.network.state, 'revoked');
    assert.equal(proj.body.data.network.canPublish, false);
  });

  describe('PATCH scheduling verifies the connection (spec 3.1)', () => {
    async function draftIn(projectId: string) {
      const r = await stack.call('POST', '/v1/posts', { body: { projectId, content: 'Draft' } });
      return r.body.data.id as string;
    }
    async function expectConflict(projectId: string, reason: string) {
      const id = await draftIn(projectId);
      const before = await postStatus(id);
      const r = await stack.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: inSeconds(3600), content: 'changed' } });
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'conflict');
      assert.equal(r.body.error.details.reason, reason);
      assert.equal(r.body.error.details.retryable, false);
      assert.match(r.body.error.details.reconnectUrl, /^https?:\/\//);
      const after = await postStatus(id);
      assert.deepEqual(after, before, 'the post is unchanged');
    }

    it('accepts a live-verified personal account and refreshes a lapsing token', async () => {
      const { project } = await connectedPersonalProject(stack.ws.workspace.id, { expiresInSeconds: 60 });
      const id = await draftIn(project.id);
      const refreshesBefore = (await sim.counts()).refreshes;
      const r = await stack.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: inSeconds(3600) } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.data.status, 'scheduled');
      assert.equal((await sim.counts()).refreshes, refreshesBefore + 1);
      const events = await db()('outbox_events').andWhereRaw(`data->'post'->>'id' = ?`, [id]).orderBy('seq').pluck('type');
      assert.deepEqual(events.slice(-2), ['post.updated', 'post.scheduled']);
    });

    it('refuses without a token at once', async () => {
      const p = await (
        await import('../../admin/provision')
      ).createProject({ workspaceId: stack.ws.workspace.id, type: 'PERSONAL_BRAND', name: 'No token', connection: 'disconnected' });
      const callsBefore = (await sim.counts()).calls.identity;
      await expectConflict(p.id, 'no_token');
      assert.equal((await sim.counts()).calls.identity, callsBefore, 'no network call for a missing token');
    });

    it('refuses a token the network revoked', async () => {
      const { project, token } = await connectedPersonalProject(stack.ws.workspace.id);
      await sim.revokeToken({ token: token.accessToken });
      await expectConflict(project.id, 'revoked');
    });

    it('refuses a company page never linked, and one with no admins left', async () => {
      const provision = await import('../../admin/provision');
      const unlinked = await provision.createProject({
        workspaceId: stack.ws.workspace.id,
        type: 'COMPANY_PAGE',
        name: 'Unlinked',
        connection: 'none',
      });
      await expectConflict(unlinked.id, 'not_linked');
      const { page } = await connectedCompanyPage(stack.ws.workspace.id, 'none');
      await expectConflict(page.id, 'no_admins');
    });

    it('refuses a stored revoked connection', async () => {
      const provision = await import('../../admin/provision');
      const p = await provision.createProject({
        workspaceId: stack.ws.workspace.id,
        type: 'PERSONAL_BRAND',
        name: 'Revoked',
        connection: 'revoked',
      });
      await expectConflict(p.id, 'revoked');
    });
  });
});
