import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { typedClient } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connectedPersonalProject, simulator } from '../support/network';
import { IsolatedStack } from '../support/processes';

import { inSeconds } from '../support/time';

// Driven through the typed client generated from the OpenAPI document (client/), as a caller would.
// spec 3.1 + the exactly-once promise: with timers pending, every process (API, worker and the
// Temporal server itself) is killed and restarted; each post is published exactly once, an
// unscheduled post never.
describe('publishing survives killing every process (end to end)', function () {
  this.timeout(240_000);
  const sim = simulator();
  const stack = new IsolatedStack('restart-e2e', { ownTemporal: true });

  before(() => stack.start());
  afterEach(async () => {
    await sim.clearFaults();
  });
  after(() => stack.stop());

  async function waitAllSettled(ids: string[], timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await db()('posts').whereIn('id', ids).select('id', 'status');
      if (rows.every((r) => r.status !== 'scheduled')) return rows;
      if (Date.now() > deadline)
        throw new Error(
          `still scheduled: ${rows
            .filter((r) => r.status === 'scheduled')
            .map((r) => r.id)
            .join(', ')}\nworker: ${stack.worker?.output.join('\n').slice(-1500)}`,
        );
      await sleep(300);
    }
  }

  it('publishes each post exactly once after the API, the worker and Temporal were all killed with timers pending', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const rest = typedClient(stack.apiUrl, ws.key);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await rest.POST('/v1/posts', {
        body: { projectId: project.id, content: `restart ${i}`, scheduledFor: inSeconds(5 + i) },
      });
      assert.equal(r.response.status, 200, JSON.stringify(r.error));
      ids.push(r.data!.data.id);
    }
    // One is unscheduled, one rescheduled, before the crash.
    const patch = (postId: string, scheduledFor: string | null) =>
      rest.PATCH('/v1/posts/{postId}', { params: { path: { postId } }, body: { scheduledFor } });
    assert.equal((await patch(ids[0]!, null)).response.status, 200);
    const moved = await patch(ids[1]!, inSeconds(12));
    assert.equal(moved.response.status, 200, JSON.stringify(moved.error));
    assert.equal(moved.data?.data.status, 'scheduled');
    await sleep(500);

    await Promise.all([stack.api!.kill(), stack.worker!.kill()]);
    await stack.temporal.stop();
    await sleep(8_000); // several posts fall due while nothing runs
    await stack.startTemporal();
    await Promise.all([stack.startApi(), stack.startWorker()]);

    const rows = await waitAllSettled(ids.slice(1), 90_000);
    assert.ok(
      rows.every((r) => r.status === 'published'),
      JSON.stringify(rows),
    );
    assert.equal((await db()('posts').where({ id: ids[0] }).first()).status, 'draft');
    for (const id of ids) {
      const { posts } = await sim.listPosts({ reference: id });
      assert.equal(posts.length, id === ids[0] ? 0 : 1, `post ${id} on the network ${posts.length} times`);
    }
  });

  it('publishes exactly once when the network fails transiently and the worker crashes mid-retry', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const rest = typedClient(stack.apiUrl, ws.key);
    await sim.addFault({ kind: 'transient', operation: 'createPost', times: 4 });
    await sim.addFault({ kind: 'lost_response', operation: 'createPost', times: 1, lostAs: 'socket' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await rest.POST('/v1/posts', { body: { projectId: project.id, content: `flaky ${i}`, scheduledFor: inSeconds(2) } })).data!.data
          .id,
      );
    await sleep(3_500);
    await stack.worker!.kill();
    await sleep(1_000);
    await stack.startWorker();
    const rows = await waitAllSettled(ids, 90_000);
    assert.ok(
      rows.every((r) => r.status === 'published'),
      JSON.stringify(rows),
    );
    for (const id of ids) assert.equal((await sim.listPosts({ reference: id })).posts.length, 1);
  });

  it('races reschedules and unschedules against the firing timer without double or stray posts', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const rest = typedClient(stack.apiUrl, ws.key);
    const cases: Array<{ id: string; action: 'unschedule' | 'reschedule' }> = [];
    for (let i = 0; i < 10; i++) {
      const r = await rest.POST('/v1/posts', { body: { projectId: project.id, content: `race ${i}`, scheduledFor: inSeconds(3) } });
      cases.push({ id: r.data!.data.id, action: i % 2 ? 'unschedule' : 'reschedule' });
    }
    // Fire the changes around the due time, spread over ±300 ms.
    const due = Date.parse((await db()('posts').where({ id: cases[0]!.id }).first()).scheduled_at);
    await sleep(Math.max(0, due - Date.now() - 300));
    const answers = await Promise.all(
      cases.map(async (c, i) => {
        await sleep(i * 60);
        const body = c.action === 'unschedule' ? { scheduledFor: null } : { scheduledFor: inSeconds(4) };
        return rest.PATCH('/v1/posts/{postId}', { params: { path: { postId: c.id } }, body });
      }),
    );
    await sleep(6_000);
    await waitAllSettled(
      cases.map((c) => c.id),
      60_000,
    );
    for (const [i, c] of cases.entries()) {
      const row = await db()('posts').where({ id: c.id }).first();
      const onNetwork = (await sim.listPosts({ reference: c.id })).posts.length;
      const answer = answers[i]!;
      if (answer.response.status === 200) {
        // The change won the race: an unscheduled post never goes out; a rescheduled one goes out once.
        if (c.action === 'unschedule') {
          assert.equal(row.status, 'draft');
          assert.equal(onNetwork, 0);
        } else {
          assert.equal(row.status, 'published');
          assert.equal(onNetwork, 1);
        }
      } else {
        // The publish won: the change is refused and the post is out exactly once.
        assert.equal(answer.response.status, 422, JSON.stringify(answer.error));
        assert.equal(answer.error?.error.code, 'unprocessable');
        assert.equal(row.status, 'published');
        assert.equal(onNetwork, 1);
      }
    }
  });
});
