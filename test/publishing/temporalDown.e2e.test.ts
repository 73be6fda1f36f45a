import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connectedPersonalProject, simulator } from '../support/network';
import { IsolatedStack } from '../support/processes';
import { waitFor } from '../support/wait';

// docs/reliability.md "When Temporal is down": a scheduling write still succeeds (the row is
// committed first; the workflow sync is deferred), readiness says 503 naming Temporal, and
// once Temporal is back the reconciler starts the publish workflow, which publishes the post
// exactly once. An API and a worker of the test's own run against a Temporal dev server of
// the test's own (file-backed), which is SIGKILLed and restarted on the same port and file.
describe('scheduling while Temporal is down (end to end)', function () {
  this.timeout(240_000);
  const sim = simulator();
  const stack = new IsolatedStack('temporal-down-e2e', { ownTemporal: true });

  before(() => stack.start());
  after(() => stack.stop());

  it('PATCH-schedules with 200 while Temporal is down, readiness is 503, and the post publishes exactly once after it is back', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const call = client(stack.apiUrl, ws.key);
    const created = await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'scheduled while Temporal is down' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id: string = created.body.data.id;

    stack.temporal.child.kill('SIGKILL');
    await stack.temporal.exited;

    const ready = await fetch(`${stack.apiUrl}/v1/health/ready`);
    assert.equal(ready.status, 503);
    const readyBody = (await ready.json()) as { data: { checks: Record<string, { status: string }> } };
    assert.equal(readyBody.data.checks.temporal!.status, 'unavailable');
    assert.equal(readyBody.data.checks.postgres!.status, 'ok');

    const dueAt = new Date(Date.now() + 45_000);
    const patched = await call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: dueAt.toISOString() } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.data.status, 'scheduled');
    const row = await db()('posts').where({ id }).first();
    assert.equal(row.status, 'scheduled');
    assert.equal(new Date(row.scheduled_at).toISOString(), dueAt.toISOString());
    assert.ok(row.workflow_synced_version < row.schedule_version, 'the workflow sync is left to the reconciler');

    await sleep(2_000);
    await stack.startTemporal();
    // A worker that gave up on the lost Temporal is restarted, as its supervisor would.
    if (!stack.workerAlive()) await stack.startWorker();
    await waitFor(async () => (await fetch(`${stack.apiUrl}/v1/health/ready`)).status === 200, 30_000, 'readiness 200 again', 250);

    // The reconciler syncs the workflow well before the post is due.
    await waitFor(
      async () => {
        const r = await db()('posts').where({ id }).first();
        return r.workflow_synced_version === r.schedule_version;
      },
      Math.max(5_000, dueAt.getTime() - Date.now() - 2_000),
      'the reconciler syncing the publish workflow',
      250,
    );
    assert.equal((await sim.listPosts({ reference: id })).posts.length, 0, 'not published before its due time');

    const published = await waitFor(
      async () => {
        const r = await db()('posts').where({ id }).first();
        return r.status === 'published' ? r : false;
      },
      dueAt.getTime() - Date.now() + 60_000,
      'the post published',
      300,
    );
    assert.ok(new Date(published.published_at).getTime() >= dueAt.getTime() - 1_000, 'published at its due time, not before');
    await sleep(3_000); // a duplicate would show up now
    const { posts } = await sim.listPosts({ reference: id });
    assert.equal(posts.length, 1, `on the network ${posts.length} times`);
    assert.ok(Date.parse(posts[0]!.receivedAt) >= dueAt.getTime() - 1_000);
  });
});
