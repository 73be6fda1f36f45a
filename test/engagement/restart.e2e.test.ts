import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { randomBase62 } from '../../lib/ids';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { storeConnectionTokens } from '../../admin/connections';
import { createProject } from '../../admin/provision';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connectedPersonalProject, simulator } from '../support/network';
import { IsolatedStack } from '../support/processes';
import { waitFor } from '../support/wait';

// docs/engagement.md "Exactly once": the worker is killed (SIGKILL) while the engagement's
// jittered timers are pending; a new worker finishes it and each amplifier likes exactly once.

describe('engagement survives a killed worker (end to end)', function () {
  this.timeout(180_000);
  const sim = simulator();
  const stack = new IsolatedStack(`engage-e2e-${randomBase62(6)}`, {
    env: { ENGAGEMENT_MIN_DELAY_SECONDS: '4', ENGAGEMENT_MAX_DELAY_SECONDS: '6' },
  });

  before(() => stack.start());
  after(() => stack.stop());

  it('each amplifier likes once although the worker died with the timers pending', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const amps: string[] = [];
    for (let i = 0; i < 3; i++) {
      const amp = await createProject({ workspaceId: ws.workspace.id, type: 'AMPLIFIER', name: `Amp ${i}`, connection: 'none' });
      const personId = `k${randomBase62(10)}`;
      const token = await sim.issueToken({ personId });
      await storeConnectionTokens({
        workspaceId: ws.workspace.id,
        projectId: amp.id,
        accessToken: token.accessToken,
        refreshToken: token.refreshToken,
        expiresAt: new Date(token.expiresAt),
        personId,
      });
      amps.push(`urn:li:person:${personId}`);
    }
    const call = client(stack.apiUrl, ws.key);
    const id = (await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'Killed worker launch' } })).body.data.id;
    const res = await call('PATCH', `/v1/posts/${id}`, {
      body: { autoLike: true, scheduledFor: new Date(Date.now() + 2_000).toISOString() },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const row = await waitFor(
      async () => {
        const r = await db()('posts').where({ id }).first();
        return r.status === 'published' && r;
      },
      60_000,
      'published',
    );
    const handle = (await temporalClient()).workflow.getHandle(workflowIds.engagement(id));
    await waitFor(async () => (await handle.describe().catch(() => null))?.status.name === 'RUNNING', 20_000, 'engagement running');
    assert.equal((await sim.listEngagement(row.network_post_urn)).likes.length, 0, 'still waiting its jittered delays');

    await stack.worker!.kill('SIGKILL');
    await stack.startWorker();
    const status = await handle.result();
    assert.deepEqual(status, { planned: 3, done: 3, skipped: 0, failed: 0 });
    const likes = (await sim.listEngagement(row.network_post_urn)).likes;
    assert.deepEqual(likes.map((l) => l.actor).sort(), amps.sort());
    for (const l of likes) assert.equal(l.calls, 1, 'one like call per account');
  });
});
