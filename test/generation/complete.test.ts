// The completion step of a generation job (activities/generation.ts completeGenerationJob): the
// draft and DONE in one transaction whose final UPDATE locks the job and requires RUNNING and
// its project, with both events in one INSERT; a job that ended meanwhile gains nothing, and a
// project deleted while the post was written fails the job.

import assert from 'node:assert/strict';
import { startQueuedJob } from '../../activities/jobRows';
import { createGenerationActivities } from '../../activities/generation';
import { db } from '../../lib/db';
import { settleJobSpend } from '../../lib/spend/settlement';
import { queuedPostGeneration, workspaceWithKey } from '../support/factories';

async function runningJob(ws: { workspace: { id: string }; project: { id: string; type: string }; keyId: string }) {
  const job = await queuedPostGeneration(ws);
  assert.equal((await startQueuedJob(db(), job.id, 0.1, 'Writing the post')).running, true);
  return job.id as string;
}

describe('generation completion step', function () {
  this.timeout(60_000);
  const activities = createGenerationActivities({ db: db(), writer: null as never });
  const jobs: string[] = [];
  after(async () => {
    for (const id of jobs) await settleJobSpend(db(), id);
  });

  it('writes the draft with its default board status and the job DONE; a second call answers the same post', async () => {
    const ws = await workspaceWithKey();
    const jobId = await runningJob(ws);
    jobs.push(jobId);
    const draft = { content: 'A post about checklists.', title: 'Checklists' };
    const done = await activities.completeGenerationJob({ jobId, draft });
    assert.equal(done.status, 'DONE');
    const post = await db()('posts as p')
      .join('post_statuses as s', 's.id', 'p.status_id')
      .where('p.id', done.postId!)
      .first('p.project_id', 'p.generation_job_id', 'p.status', 'p.content', 's.category', 's.is_default', 's.title');
    const { title: statusTitle, ...rest } = post;
    assert.deepEqual(rest, {
      project_id: ws.project.id,
      generation_job_id: jobId,
      status: 'draft',
      content: draft.content,
      category: 'draft',
      is_default: true,
    });
    const event = await db()('outbox_events').where({ workspace_id: ws.workspace.id, type: 'post.created' }).first('data');
    assert.equal(event.data.post.id, done.postId);
    // The event's post carries the status label read in the insert's own statement.
    assert.equal(event.data.post.statusTitle, statusTitle);
    assert.equal(event.data.post.statusCategory, 'draft');
    assert.deepEqual(await activities.completeGenerationJob({ jobId, draft }), { status: 'DONE', postId: done.postId });
  });

  it("adds the draft's cost to the job with its final state, once, before settlement reads it", async () => {
    const ws = await workspaceWithKey();
    const jobId = await runningJob(ws);
    jobs.push(jobId);
    const draft = { content: 'A post about costs.', title: 'Costs', costCents: 3 };
    assert.equal((await activities.completeGenerationJob({ jobId, draft })).status, 'DONE');
    // A retry of the completion (its answer lost) finds the job DONE and charges nothing again.
    assert.equal((await activities.completeGenerationJob({ jobId, draft })).status, 'DONE');
    assert.equal((await db()('jobs').where({ id: jobId }).first('cost_cents')).cost_cents, 3);
    // A draft of a history from before carries no cost (its writer charged it): nothing added.
    const older = await runningJob(ws);
    jobs.push(older);
    await db()('jobs').where({ id: older }).update({ cost_cents: 2 });
    assert.equal((await activities.completeGenerationJob({ jobId: older, draft: { content: 'Older.', title: 'Older' } })).status, 'DONE');
    assert.equal((await db()('jobs').where({ id: older }).first('cost_cents')).cost_cents, 2);
  });

  it('appends post.created then job.completed, the DONE job naming the draft', async () => {
    const ws = await workspaceWithKey();
    const jobId = await runningJob(ws);
    jobs.push(jobId);
    const done = await activities.completeGenerationJob({ jobId, draft: { content: 'Events.', title: 'Events' } });
    const events = await db()('outbox_events').where({ workspace_id: ws.workspace.id }).orderBy('seq').select('type', 'data', 'project_id');
    assert.deepEqual(
      events.map((e) => e.type),
      ['post.created', 'job.completed'],
    );
    assert.equal(events[1].data.job.id, jobId);
    assert.equal(events[1].data.job.status, 'DONE');
    assert.deepEqual(events[1].data.job.result, { postId: done.postId });
    assert.equal(events[1].project_id, ws.project.id);
  });

  it('gives a job that ended while the post was written no post and no event, and charges the call', async () => {
    const ws = await workspaceWithKey();
    const jobId = await runningJob(ws);
    jobs.push(jobId);
    await db()('jobs').where({ id: jobId }).update({ status: 'FAILED', completed_at: db().fn.now() });
    const draft = { content: 'Too late.', title: 'Late', costCents: 4 };
    assert.deepEqual(await activities.completeGenerationJob({ jobId, draft }), { status: 'FAILED' });
    const job = await db()('jobs').where({ id: jobId }).first('status', 'cost_cents', 'result');
    assert.deepEqual(job, { status: 'FAILED', cost_cents: 4, result: null });
    assert.equal(Number((await db()('posts').where({ generation_job_id: jobId }).count('* as n').first())!.n), 0);
    assert.equal(Number((await db()('outbox_events').where({ workspace_id: ws.workspace.id }).count('* as n').first())!.n), 0);
  });

  it('fails the job with project_not_found when its project was deleted while the post was written', async () => {
    const ws = await workspaceWithKey();
    const jobId = await runningJob(ws);
    jobs.push(jobId);
    await db()('projects').where({ id: ws.project.id }).delete();
    assert.deepEqual(await activities.completeGenerationJob({ jobId, draft: { content: 'Orphan.', title: 'Orphan' } }), {
      status: 'FAILED',
    });
    const job = await db()('jobs').where({ id: jobId }).first('status', 'error_code');
    assert.deepEqual(job, { status: 'FAILED', error_code: 'project_not_found' });
    assert.equal(Number((await db()('posts').where({ generation_job_id: jobId }).count('* as n').first())!.n), 0);
    // Its job.completed only: no post.created.
    assert.deepEqual(
      (await db()('outbox_events').where({ workspace_id: ws.workspace.id }).select('type')).map((e) => e.type),
      ['job.completed'],
    );
  });
});
