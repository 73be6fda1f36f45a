import assert from 'node:assert/strict';
import { createPublishingActivities } from '../../activities/publishing';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { createNetworkClient } from '../../lib/network/client';
import { temporalClient, workflowIds } from '../../lib/temporal';
import { workspaceWithKey } from '../support/factories';

// A job row committed whose workflow start was lost (the API process died in between): the
// reconciler starts it, once, and leaves fresh jobs to the request that is still starting them.

describe('the reconciler and jobs whose workflow start was lost', function () {
  this.timeout(60_000);
  const reconcile = () => createPublishingActivities({ db: db(), network: createNetworkClient(), temporal: temporalClient }).reconcile();

  async function queuedJob(workspaceId: string, projectId: string, ageSeconds: number): Promise<string> {
    const id = newId('job');
    await db()('jobs').insert({
      id,
      workspace_id: workspaceId,
      project_id: projectId,
      type: 'POST_GENERATION',
      status: 'QUEUED',
      input: JSON.stringify({ source: { type: 'text', text: 'A post about reconcilers.' }, options: {} }),
      progress: JSON.stringify({ progress: 0, updatedAt: new Date().toISOString(), message: 'Waiting for a worker' }),
      estimated_completion_ms: 1000,
      created_at: db().raw(`now() - make_interval(secs => ?)`, [ageSeconds]),
    });
    return id;
  }
  const describeRun = async (jobId: string) => {
    try {
      return await (await temporalClient()).workflow.getHandle(workflowIds.generation(jobId)).describe();
    } catch {
      return null;
    }
  };

  it('starts the workflow of an orphaned QUEUED job once; a fresh job is left alone', async () => {
    const { workspace, project } = await workspaceWithKey();
    const orphan = await queuedJob(workspace.id, project.id, 120);
    const fresh = await queuedJob(workspace.id, project.id, 0);
    assert.equal(await describeRun(orphan), null, 'no workflow before the pass');

    const first = await reconcile();
    assert.ok((first.jobsStarted ?? 0) >= 1, JSON.stringify(first));
    const run = await describeRun(orphan);
    assert.ok(run, 'the orphaned job has its workflow');
    assert.equal(run.workflowId, workflowIds.generation(orphan));
    assert.equal(await describeRun(fresh), null, 'a job younger than the grace period is not touched');

    // The next pass finds the workflow there (the job may still be QUEUED): not started again.
    await reconcile();
    assert.equal((await describeRun(orphan))!.runId, run.runId);
    await db()('jobs').whereIn('id', [orphan, fresh]).update({ status: 'CANCELLED' });
  });
});
