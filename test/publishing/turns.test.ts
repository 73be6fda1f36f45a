import assert from 'node:assert/strict';
import { defaultPayloadConverter } from '@temporalio/common';
import { config } from '../../lib/config';
import { publishTurnMs } from '../../lib/publishing/turns';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { apiAndWorker } from '../support/stack';
import { connectedPersonalProject } from '../support/network';
import { db } from '../../lib/db';
import { scheduledPostRow, workspaceWithKey } from '../support/factories';

// Turns within a due instant (lib/publishing/turns.ts, docs/publishing.md "Turns"): a
// workspace's posts due at one instant fire 1 ms apart, each workspace counted on its own, so
// every workspace's first post is fired before any workspace's second. Counted from the posts
// themselves.
describe('publish turns within a due instant', function () {
  this.timeout(60_000);

  it("counts the workspace's scheduled posts of the same time with a smaller id, up to the spread", async () => {
    const [a, b] = await Promise.all([workspaceWithKey(), workspaceWithKey()]);
    const at = new Date(Math.ceil((Date.now() + 3_600_000) / 1000) * 1000);
    const row = (ws: typeof a, id: string, over: Record<string, unknown> = {}) => scheduledPostRow(ws, id, at, over);
    const ids = ['post_turn0001', 'post_turn0002', 'post_turn0003', 'post_turn0004'];
    await db()('posts').insert([
      ...ids.map((id) => row(a, id)),
      row(a, 'post_turn0000a', { status: 'draft' }), // not scheduled: not counted
      row(a, 'post_turn0000b', { deleted_at: new Date() }), // deleted: not counted
      row(a, 'post_turn0000c', { scheduled_at: new Date(at.getTime() + 60_000) }), // another time
      row(b, 'post_turn0000d'), // another workspace
    ]);
    const turn = (ws: typeof a, id: string, when = at) => publishTurnMs({ id, workspace_id: ws.workspace.id, scheduled_at: when });
    assert.deepEqual(await Promise.all(ids.map((id) => turn(a, id))), [0, 1, 2, 3]);
    assert.equal(await turn(b, 'post_turn9999'), 1, "the other workspace's one post before it");
    assert.equal(await turn(a, 'post_turn9999', new Date(at.getTime() + 60_000)), 1, 'the other time has one');
    // The spread caps it.
    const spread = config.publish.turnSpreadMs;
    try {
      (config.publish as { turnSpreadMs: number }).turnSpreadMs = 2;
      assert.equal(await turn(a, 'post_turn9999'), 2);
      (config.publish as { turnSpreadMs: number }).turnSpreadMs = 0;
      assert.equal(await turn(a, 'post_turn9999'), 0, 'spread 0: no turns');
    } finally {
      (config.publish as { turnSpreadMs: number }).turnSpreadMs = spread;
    }
  });

  describe('through the API', () => {
    const stack = apiAndWorker();

    it("a workspace's posts for one instant are held in turns; another workspace's first post is not behind them", async () => {
      const { project } = await connectedPersonalProject(stack.ws.workspace.id);
      const scheduledFor = new Date(Math.ceil((Date.now() + 3_600_000) / 1000) * 1000).toISOString();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await stack.call('POST', '/v1/posts', { body: { projectId: project.id, content: `Turn ${i}`, scheduledFor } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        ids.push(res.body.data.id);
      }
      const client = await temporalClient();
      const starts = await Promise.all(
        ids.map(async (id) => {
          const first = (await client.workflow.getHandle(workflowIds.publish(id)).fetchHistory()).events![0]!;
          const started = first.workflowExecutionStartedEventAttributes!;
          const input = defaultPayloadConverter.fromPayload<{ schedule: { turnMs?: number } }>(started.input!.payloads![0]!);
          return {
            turnMs: input.schedule.turnMs,
            backoffMs: Number(started.firstWorkflowTaskBackoff!.seconds) * 1000 + started.firstWorkflowTaskBackoff!.nanos! / 1e6,
          };
        }),
      );
      // Each took the count of the posts of that time already there with a smaller id (ids are random).
      assert.deepEqual(
        starts.map((s) => s.turnMs),
        ids.map((id, i) => ids.slice(0, i).filter((earlier) => earlier < id).length),
        JSON.stringify({ ids, starts }),
      );
      for (const id of ids) await stack.call('DELETE', `/v1/posts/${id}`);
    });
  });
});
