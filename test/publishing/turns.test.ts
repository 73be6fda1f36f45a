import assert from 'node:assert/strict';
import { defaultPayloadConverter } from '@temporalio/common';
import { config } from '../../lib/config';
import { publishTurnMs } from '../../lib/publishing/turns';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { redis } from '../../lib/redis';
import { apiAndWorker } from '../support/stack';
import { connectedPersonalProject } from '../support/network';
import { newId } from '../../lib/ids';

// Turns within a due instant (lib/publishing/turns.ts, docs/publishing.md "Turns"): a
// workspace's posts due at one instant fire 1 ms apart, each workspace counted on its own, so
// every workspace's first post is fired before any workspace's second.
describe('publish turns within a due instant', function () {
  this.timeout(60_000);

  it('counts each workspace and instant on its own, 1 ms a post, up to the spread', async () => {
    const [a, b] = [newId('workspace'), newId('workspace')];
    const at = Date.now() + 3_600_000;
    assert.deepEqual([await publishTurnMs(a, at), await publishTurnMs(a, at), await publishTurnMs(a, at)], [0, 1, 2]);
    assert.equal(await publishTurnMs(b, at), 0, 'another workspace starts at 0');
    assert.equal(await publishTurnMs(a, at + 60_000), 0, 'another instant starts at 0');
    // Kept in Redis until an hour past the instant.
    const ttl = await redis().pttl(`publish-turn:${a}:${at}`);
    assert.ok(ttl > 2 * 3_600_000 - 60_000 && ttl <= 2 * 3_600_000, `expires ${ttl} ms from now`);
    // The spread caps it.
    const spread = config.publish.turnSpreadMs;
    await redis().set(`publish-turn:${a}:${at}`, String(spread + 50));
    assert.equal(await publishTurnMs(a, at), spread);
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
      assert.deepEqual(
        starts.map((s) => s.turnMs),
        [0, 1, 2],
      );
      for (const id of ids) await stack.call('DELETE', `/v1/posts/${id}`);
    });
  });
});
