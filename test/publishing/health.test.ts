import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { ensureHealthWorkflow } from '../../lib/temporal/start/connectionHealth';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { checkNowSignal, healthStatusQuery } from '../../workflows/connectionHealth';
import { maybeRecordHistory } from '../support/histories';
import { client, startApi, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { connectedCompanyPage, connectedPersonalProject, simulator } from '../support/network';

import { waitFor } from '../support/wait';

async function connectionOf(projectId: string) {
  const p = await db()('projects').where({ id: projectId }).first('connection_id');
  return db()('network_connections').where({ id: p.connection_id }).first();
}

/**
 * Asks for a check now and waits until the connection row matches `predicate` and the workflow
 * says (through its own status query) that it has finished that check and is waiting again, so
 * no check is running or about to when the caller looks.
 */
async function checkNowAndWait(projectId: string, predicate: (c: any) => boolean) {
  const handle = (await temporalClient()).workflow.getHandle(workflowIds.connectionHealth(projectId));
  // Signal only a waiting workflow (not one mid-check), so each signal makes exactly one check.
  const idle = await waitFor(
    async () => {
      const s = await handle.query(healthStatusQuery);
      return s.nextCheckAtMs !== null && s;
    },
    20_000,
    'the health workflow to wait',
  );
  const before = idle.checks;
  await handle.signal(checkNowSignal);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const c = await connectionOf(projectId);
    const s = await handle.query(healthStatusQuery);
    if (predicate(c) && s.checks > before && s.nextCheckAtMs !== null) return connectionOf(projectId);
    if (Date.now() > deadline) throw new Error(`connection never matched: ${JSON.stringify(c)} ${JSON.stringify(s)}`);
    await sleep(100);
  }
}

// spec 2.6 / 3.4: periodic validation on Temporal; successes reset the streak and stamp
// lastValidatedAt; three consecutive failures revoke; reading a project never probes.
describe('connection health workflow', function () {
  this.timeout(90_000);
  const sim = simulator();
  let worker: ServiceWorker;
  let running: Promise<void>;
  let api: TestServer;

  before(async () => {
    api = await startApi();
    ({ worker } = await createWorker());
    running = worker.run();
  });
  after(async () => {
    worker.shutdown();
    await running;
    await api.close();
  });

  it('stamps lastValidatedAt on success and revokes after three consecutive failures', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project, token } = await connectedPersonalProject(ws.workspace.id);
    await db()('network_connections')
      .where({ id: (await connectionOf(project.id)).id })
      .update({ last_validated_at: null, consecutive_failures: 2, connection_status: 'DEGRADED' });
    assert.equal(await ensureHealthWorkflow(await temporalClient(), project), true);
    assert.equal(await ensureHealthWorkflow(await temporalClient(), project), false, 'one workflow per project');
    const ok = await checkNowAndWait(project.id, (c) => c.last_validated_at !== null);
    assert.equal(ok.consecutive_failures, 0, 'a success resets the streak');
    assert.equal(ok.connection_status, 'CONNECTED');

    await sim.revokeToken({ token: token.accessToken });
    const one = await checkNowAndWait(project.id, (c) => c.consecutive_failures === 1);
    assert.equal(one.connection_status, 'DEGRADED');
    const call = client(api.url, ws.key);
    assert.equal((await call('GET', `/v1/projects/${project.id}`)).body.data.network.state, 'degraded');
    await checkNowAndWait(project.id, (c) => c.consecutive_failures === 2);
    const revoked = await checkNowAndWait(project.id, (c) => c.consecutive_failures === 3);
    assert.equal(revoked.connection_status, 'REVOKED');
    const block = (await call('GET', `/v1/projects/${project.id}`)).body.data.network;
    assert.equal(block.state, 'revoked');
    assert.equal(block.canPublish, false);
    await maybeRecordHistory(workflowIds.connectionHealth(project.id), 'connectionHealth-revoked');
  });

  it('fails a company page whose admin set is empty', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { page } = await connectedCompanyPage(ws.workspace.id, 'none');
    await ensureHealthWorkflow(await temporalClient(), page);
    const c = await checkNowAndWait(page.id, (x) => x.consecutive_failures >= 1);
    assert.equal(c.last_error, 'no_admins');
  });

  it('reading a project never probes the network', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const before = (await sim.counts()).calls;
    const call = client(api.url, ws.key);
    for (let i = 0; i < 3; i++) assert.equal((await call('GET', `/v1/projects/${project.id}`)).status, 200);
    await call('GET', '/v1/projects');
    await call('GET', '/v1/workspaces/context');
    assert.deepEqual((await sim.counts()).calls, before);
  });
});
