import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { setDefaultReviewer, setReviewGate } from '../../admin/controls';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { reviewStatusQuery } from '../../workflows/reviewPost';
import { client } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { maybeRecordHistory } from '../support/histories';
import { connectedPersonalProject, simulator } from '../support/network';
import { waitFor } from '../support/wait';
import { inSeconds } from '../support/time';
import { register, useOAuthApi, tokenFor } from '../oauth/support';

// Review before publishing (docs/review.md; spec 2.4, 2.7 `review`, 3.1, 5.4, 6) over real HTTP,
// Postgres, Temporal (worker in-process) and the network simulator.

describe('review before publishing (real HTTP, Temporal, simulator)', function () {
  this.timeout(120_000);
  const api = useOAuthApi();
  let worker: ServiceWorker;
  let running: Promise<void>;
  let clientId: string;
  const redirectUri = 'https://client.example.com/cb';
  const sim = simulator();

  before(async () => {
    clientId = (await register(api.url, { client_name: 'Review client', redirect_uris: [redirectUri] })).body.client_id;
    ({ worker } = await createWorker());
    running = worker.run();
  });
  after(async () => {
    worker.shutdown();
    await running;
  });

  const oauth = async (email: string, workspace: string, project: string) =>
    (await tokenFor(api.url, { clientId, redirectUri, email, scope: 'read write', access: 'full', workspace, project })).access_token;

  async function gatedWorkspace() {
    const ws = await workspaceWithKey({ projects: 0 });
    await setReviewGate({ workspaceId: ws.workspace.id, required: true });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const call = client(api.url, ws.key);
    const draft = async (content = 'A post for the client') => {
      const res = await call('POST', '/v1/posts', { body: { projectId: project.id, content } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data.id as string;
    };
    return { ...ws, project, call, draft };
  }

  const eventsOf = async (postId: string) =>
    db()('outbox_events').whereRaw(`data->'post'->>'id' = ?`, [postId]).orderBy('seq').pluck('type');

  it('a whole round: gate refuses, request with a deadline, overdue with a reminder, Client-role approval, final decision, then scheduling', async () => {
    const w = await gatedWorkspace();
    const reviewer = await member(w.workspace.id, 'Client', [w.project.id]);
    const asClient = client(api.url, await oauth(reviewer.email, w.workspace.id, w.project.id));
    const id = await w.draft();

    // The gate: not approved, so scheduling is refused before any network call.
    const callsBefore = (await sim.counts()).calls.identity;
    const refused = assertError(await w.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: inSeconds(3600) } }), 409, 'conflict');
    assert.equal(refused.details?.reason, 'review_required');
    assert.equal((await sim.counts()).calls.identity, callsBefore, 'no live connection check for a refused post');
    assert.equal(
      assertError(await w.call('POST', '/v1/posts', { body: { projectId: w.project.id, scheduledFor: inSeconds(3600) } }), 409, 'conflict')
        .details?.reason,
      'review_required',
    );

    // Request: status waitingApproval and the full review block.
    const deadline = inSeconds(2);
    const requested = await w.call('POST', `/v1/posts/${id}/review`, {
      body: { reviewerUserId: reviewer.id, deadline, notes: 'Check the numbers' },
    });
    assert.equal(requested.status, 200, JSON.stringify(requested.body));
    assert.equal(requested.body.data.status, 'waitingApproval');
    assert.equal(requested.body.data.statusCategory, 'review');
    assert.deepEqual(
      { ...requested.body.data.review, detail: undefined },
      {
        state: 'pending',
        awaitingDecision: true,
        reviewerUserId: reviewer.id,
        deadline: new Date(deadline).toISOString(),
        overdue: false,
        decidedAt: null,
        notes: 'Check the numbers',
        requiredByWorkspace: true,
        detail: undefined,
      },
    );
    assert.equal(
      assertError(await w.call('POST', `/v1/posts/${id}/review`, { body: { reviewerUserId: reviewer.id } }), 409, 'conflict').details
        ?.reason,
      'review_pending',
    );

    // The client view lists exactly the posts awaiting its decision.
    const awaiting = await asClient('GET', '/v1/reviews/awaiting');
    assert.equal(awaiting.status, 200, JSON.stringify(awaiting.body));
    assert.deepEqual(
      awaiting.body.data.map((p: { id: string }) => p.id),
      [id],
    );
    assert.equal((await asClient('GET', `/v1/posts/${id}`)).status, 200);

    // Past the deadline: overdue and a reminder event; nothing is approved by the clock.
    const overdue = await waitFor(
      async () => {
        const row = await db()('posts').where({ id }).first('review');
        return row.review.overdue === true && row.review;
      },
      20_000,
      'overdue',
    );
    assert.equal(overdue.state, 'pending');
    assert.ok((await eventsOf(id)).includes('post.review_overdue'));
    const handle = (await temporalClient()).workflow.getHandle(workflowIds.review(id, 1));
    assert.equal((await handle.query(reviewStatusQuery)).state, 'overdue');

    // A Client-role reviewer approves: the one write 5.4 lets it make.
    assertError(await asClient('PATCH', `/v1/posts/${id}`, { body: { content: 'client edit' } }), 403, 'forbidden_project');
    const approved = await asClient('POST', `/v1/posts/${id}/review/approve`, { body: { notes: 'Good to go' } });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(approved.body.data.status, 'approved');
    assert.equal(approved.body.data.review.state, 'approved');
    assert.equal(approved.body.data.review.awaitingDecision, false);
    assert.equal(approved.body.data.review.notes, 'Good to go');
    assert.ok(approved.body.data.review.decidedAt);
    // Final for the round.
    assert.equal(
      assertError(await asClient('POST', `/v1/posts/${id}/review/reject`, { body: {} }), 409, 'conflict').details?.reason,
      'no_review_pending',
    );
    assert.deepEqual((await asClient('GET', '/v1/reviews/awaiting')).body.data, []);
    const result = await handle.result();
    assert.deepEqual(result, { outcome: 'closed', overdue: true });
    await maybeRecordHistory(workflowIds.review(id, 1), 'reviewPost-overdue-then-approved');

    // Approved: the gate lets it through.
    const scheduled = await w.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: inSeconds(3600) } });
    assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
    assert.equal(scheduled.body.data.status, 'scheduled');
    assert.deepEqual(await eventsOf(id), [
      'post.created',
      'post.review_requested',
      'post.review_overdue',
      'post.approved',
      'post.updated',
      'post.scheduled',
    ]);
  });

  it('reject, re-edit, a new round, and an edit after approval sends the post back to review', async () => {
    const w = await gatedWorkspace();
    const reviewer = await member(w.workspace.id, 'Member', [w.project.id]);
    const other = await member(w.workspace.id, 'Member', [w.project.id]);
    const asReviewer = client(api.url, await oauth(reviewer.email, w.workspace.id, w.project.id));
    const asOther = client(api.url, await oauth(other.email, w.workspace.id, w.project.id));
    const id = await w.draft();

    assertError(await w.call('POST', `/v1/posts/${id}/review`, { body: { reviewerUserId: 'user_nobody' } }), 422, 'unprocessable');
    assertError(
      await w.call('POST', `/v1/posts/${id}/review`, { body: { reviewerUserId: reviewer.id, deadline: inSeconds(-60) } }),
      422,
      'unprocessable',
    );
    assert.equal((await w.call('POST', `/v1/posts/${id}/review`, { body: { reviewerUserId: reviewer.id } })).status, 200);

    // Only the named reviewer decides; an API key acts for no person.
    assert.equal(
      assertError(await asOther('POST', `/v1/posts/${id}/review/approve`, { body: {} }), 403, 'forbidden_project').details?.reason,
      'not_reviewer',
    );
    assert.equal(
      assertError(await w.call('POST', `/v1/posts/${id}/review/approve`, { body: {} }), 403, 'forbidden_project').details?.reason,
      'not_reviewer',
    );

    const rejected = await asReviewer('POST', `/v1/posts/${id}/review/reject`, { body: { notes: 'Too long' } });
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
    assert.equal(rejected.body.data.status, 'rejected');
    assert.equal(rejected.body.data.review.state, 'rejected');
    assert.equal(
      assertError(await w.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: inSeconds(3600) } }), 409, 'conflict').details?.reason,
      'review_rejected',
    );

    // Re-edit and a new round, approved this time.
    assert.equal((await w.call('PATCH', `/v1/posts/${id}`, { body: { content: 'Shorter' } })).body.data.review.state, 'rejected');
    assert.equal(
      (await w.call('POST', `/v1/posts/${id}/review`, { body: { reviewerUserId: reviewer.id } })).body.data.review.state,
      'pending',
    );
    assert.equal((await asReviewer('POST', `/v1/posts/${id}/review/approve`, { body: {} })).body.data.review.state, 'approved');

    // An edit after approval in a gated workspace: approval lost, back to review (same reviewer, new round).
    const edited = await w.call('PATCH', `/v1/posts/${id}`, { body: { content: 'Shorter, and changed after approval' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.equal(edited.body.data.status, 'waitingApproval');
    assert.equal(edited.body.data.review.state, 'pending');
    assert.equal(edited.body.data.review.reviewerUserId, reviewer.id);
    assert.equal((await db()('posts').where({ id }).first('review_round')).review_round, 3);
    assert.deepEqual(
      (await eventsOf(id)).filter((e) => e.startsWith('post.review') || e === 'post.approved' || e === 'post.rejected'),
      ['post.review_requested', 'post.rejected', 'post.review_requested', 'post.approved', 'post.review_requested'],
    );
    // The new round has its workflow.
    const desc = await waitFor(
      async () =>
        (await temporalClient()).workflow
          .getHandle(workflowIds.review(id, 3))
          .describe()
          .catch(() => null),
      10_000,
      'round 3 workflow',
    );
    assert.equal(desc.status.name, 'RUNNING');
    // Decided by signal: it ends at once.
    await asReviewer('POST', `/v1/posts/${id}/review/approve`, { body: {} });
    await (await temporalClient()).workflow.getHandle(workflowIds.review(id, 3)).result();
    await maybeRecordHistory(workflowIds.review(id, 3), 'reviewPost-decided');

    // Without the gate, an edit keeps the approval.
    await setReviewGate({ workspaceId: w.workspace.id, required: false });
    assert.equal((await w.call('PATCH', `/v1/posts/${id}`, { body: { content: 'Edited again' } })).body.data.review.state, 'approved');
  });

  it('an approval withdrawn before publish time prevents the publish (the publish step re-checks)', async () => {
    const w = await gatedWorkspace();
    const reviewer = await member(w.workspace.id, 'Client', [w.project.id]);
    const asClient = client(api.url, await oauth(reviewer.email, w.workspace.id, w.project.id));
    const id = await w.draft('Launch day');
    await w.call('POST', `/v1/posts/${id}/review`, { body: { reviewerUserId: reviewer.id } });
    assert.equal((await asClient('POST', `/v1/posts/${id}/review/approve`, { body: {} })).status, 200);
    const at = inSeconds(4);
    const scheduled = await w.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: at } });
    assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
    const version = (await db()('posts').where({ id }).first('schedule_version')).schedule_version;

    // The edit withdraws the approval; the schedule itself is not touched.
    const edited = await w.call('PATCH', `/v1/posts/${id}`, { body: { content: 'Launch day (edited)' } });
    assert.equal(edited.body.data.status, 'scheduled');
    assert.equal(edited.body.data.review.state, 'pending');
    assert.equal((await db()('posts').where({ id }).first('schedule_version')).schedule_version, version);

    const held = await waitFor(
      async () => {
        const r = await db()('posts').where({ id }).first();
        return r.status === 'waitingApproval' && r;
      },
      30_000,
      'held for review',
    );
    assert.equal(held.scheduled_at, null);
    assert.equal(held.last_publish_error, 'review_pending');
    assert.equal((await sim.listPosts({ reference: id })).posts.length, 0, 'nothing reached the network');
    const result = await (await temporalClient()).workflow.getHandle(workflowIds.publish(id)).result();
    assert.deepEqual(result, { outcome: 'not_scheduled' });
    assert.ok((await eventsOf(id)).includes('post.unscheduled'));
    await maybeRecordHistory(workflowIds.publish(id), 'publishPost-held-for-review');
  });

  it('a rejection of a scheduled post takes it off the schedule at once (post.unscheduled), and its publish workflow ends when it wakes', async () => {
    // Off the schedule, the workflow is left asleep and reads the row when it wakes
    // (docs/publishing.md "Moves that leave the workflow asleep"): a lead of 2 s, so that it wakes within the test.
    const lead = config.publish.leaveAsleepLeadMs;
    config.publish.leaveAsleepLeadMs = 2_000;
    try {
      const w = await gatedWorkspace();
      await setReviewGate({ workspaceId: w.workspace.id, required: false });
      const reviewer = await member(w.workspace.id, 'Member', [w.project.id]);
      const asReviewer = client(api.url, await oauth(reviewer.email, w.workspace.id, w.project.id));
      const id = await w.draft('Scheduled, then rejected');
      const scheduled = await w.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: inSeconds(10) } });
      assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
      const requested = await w.call('POST', `/v1/posts/${id}/review`, { body: { reviewerUserId: reviewer.id } });
      assert.equal(requested.body.data.status, 'scheduled', 'a request keeps the schedule');
      const version = (await db()('posts').where({ id }).first('schedule_version')).schedule_version;

      const rejected = await asReviewer('POST', `/v1/posts/${id}/review/reject`, { body: { notes: 'Not this week' } });
      assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
      assert.equal(rejected.body.data.status, 'rejected');
      assert.equal(rejected.body.data.scheduledAt, null);
      assert.equal(rejected.body.data.delivery.state, 'not_scheduled');
      assert.equal(rejected.body.data.review.state, 'rejected');
      assert.equal(rejected.body.data.statusCategory, 'review');
      assert.equal(await db()('calendar_slots').where({ post_id: id }).first(), undefined, 'the calendar slot is gone');
      assert.equal((await db()('posts').where({ id }).first('schedule_version')).schedule_version, version + 1);
      assert.deepEqual((await eventsOf(id)).slice(-2), ['post.rejected', 'post.unscheduled']);
      const result = await (await temporalClient()).workflow.getHandle(workflowIds.publish(id)).result();
      assert.deepEqual(result, { outcome: 'not_scheduled' }, 'the publish workflow read it when it woke, and ended');
      assert.equal((await sim.listPosts({ reference: id })).posts.length, 0, 'nothing reached the network');
    } finally {
      config.publish.leaveAsleepLeadMs = lead;
    }
  });

  it('a round whose workflow start was lost is started by the reconciler, and its deadline still fires', async () => {
    const w = await gatedWorkspace();
    const id = await w.draft();
    // As if the API died between the commit and the workflow start.
    const deadline = inSeconds(1);
    await db()('posts')
      .where({ id })
      .update({
        status: 'waitingApproval',
        review_round: 1,
        review_synced_round: 0,
        review: JSON.stringify({
          state: 'pending',
          awaitingDecision: true,
          reviewerUserId: null,
          deadline,
          overdue: false,
          decidedAt: null,
          notes: null,
          detail: null,
        }),
      });
    const { createMaintenanceActivities } = await import('../../activities/maintenance');
    const reconciled = await createMaintenanceActivities({ db: db(), temporal: temporalClient }).reconcileReviewsAndJobs();
    assert.ok((reconciled.reviewsStarted ?? 0) >= 1);
    assert.equal((await db()('posts').where({ id }).first('review_synced_round')).review_synced_round, 1);
    await waitFor(
      async () => (await db()('posts').where({ id }).first('review')).review.overdue === true,
      20_000,
      'overdue after reconcile',
    );
    assert.ok((await eventsOf(id)).includes('post.review_overdue'));
  });

  it('moving a post to the review category starts a round with the default reviewer', async () => {
    const w = await gatedWorkspace();
    const reviewer = await member(w.workspace.id, 'Member', [w.project.id]);
    await setDefaultReviewer({ workspaceId: w.workspace.id, userId: reviewer.id });
    const id = await w.draft();
    const moved = await w.call('PATCH', `/v1/posts/${id}`, { body: { statusCategory: 'review' } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(moved.body.data.status, 'waitingApproval');
    assert.equal(moved.body.data.review.state, 'pending');
    assert.equal(moved.body.data.review.reviewerUserId, reviewer.id);
    assert.deepEqual(await eventsOf(id), ['post.created', 'post.updated', 'post.review_requested']);
    // funnelStage follows the content type (docs/engagement.md); a pending round is not an approval to lose.
    const retyped = await w.call('PATCH', `/v1/posts/${id}`, { body: { contentType: 'BUSINESS_EXTERNAL' } });
    assert.equal(retyped.body.data.funnelStage, 'CONVERT');
    assert.equal(retyped.body.data.review.state, 'pending');
    assert.equal(moved.body.data.funnelStage, 'REACH');
  });
});
