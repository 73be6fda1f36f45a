import assert from 'node:assert/strict';
import { createMaintenanceActivities } from '../../activities/maintenance';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { startQueuedJob } from '../../lib/jobs/queue';
import { reconcileQueuedJobs } from '../../lib/jobs/reconcile';
import type { JobRow } from '../../lib/jobs/row';
import type { JobType } from '../../lib/jobs/kinds';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { workspaceWithKey } from '../support/factories';
import { assertReadThroughIndexes, statementsOf } from '../support/statements';

// A job row committed whose workflow start was lost (the API process died in between): the
// reconciler starts it, once, and leaves fresh jobs to the request that is still starting them.

describe('the reconciler and jobs whose workflow start was lost', function () {
  this.timeout(60_000);
  const reconcile = () => createMaintenanceActivities({ db: db(), temporal: temporalClient }).reconcileReviewsAndJobs();

  async function queuedJob(
    workspaceId: string,
    projectId: string | null,
    ageSeconds: number,
    startedMark = false,
    type: JobType = 'POST_GENERATION',
  ): Promise<string> {
    const id = newId('job');
    await db()('jobs').insert({
      id,
      workspace_id: workspaceId,
      project_id: projectId,
      type,
      status: 'QUEUED',
      input: JSON.stringify({ source: { type: 'text', text: 'A post about reconcilers.' }, options: {} }),
      progress: JSON.stringify({ progress: 0, updatedAt: new Date().toISOString(), message: 'Waiting for a worker' }),
      estimated_completion_ms: 1000,
      created_at: db().raw(`now() - make_interval(secs => ?)`, [ageSeconds]),
      ...(startedMark ? { workflow_started_at: db().fn.now() } : {}),
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
    assert.ok((await startedMark(orphan)) instanceof Date, 'the pass records the start');
    assert.equal(await startedMark(fresh), null);
    const run = await describeRun(orphan);
    assert.ok(run, 'the orphaned job has its workflow');
    assert.equal(run.workflowId, workflowIds.generation(orphan));
    assert.equal(await describeRun(fresh), null, 'a job younger than the grace period is not touched');

    // The next pass finds the workflow there (the job may still be QUEUED): not started again.
    await reconcile();
    assert.equal((await describeRun(orphan))!.runId, run.runId);
    await db()('jobs').whereIn('id', [orphan, fresh]).update({ status: 'CANCELLED' });
  });

  it('skips a QUEUED job whose workflow start was recorded, and confirms one whose mark was lost', async () => {
    const { workspace, project } = await workspaceWithKey();
    // Recorded as started (the API's mark) but, here, with no workflow behind it: a pass that
    // asked Temporal would start one; the pass must not even look.
    const marked = await queuedJob(workspace.id, project.id, 120, true);
    // A workflow that exists while its mark was lost: the pass confirms it without a second run.
    const unmarked = await queuedJob(workspace.id, project.id, 120);
    await reconcile();
    const run = await describeRun(unmarked);
    assert.ok(run);
    await db()('jobs').where({ id: unmarked }).update({ workflow_started_at: null });
    await reconcile();
    assert.equal((await describeRun(unmarked))!.runId, run.runId, 'not started twice');
    assert.ok((await startedMark(unmarked)) instanceof Date, 'an already-started workflow is recorded');
    assert.equal(await describeRun(marked), null, 'a recorded start is not sent to Temporal again');
    await db()('jobs').whereIn('id', [marked, unmarked]).update({ status: 'CANCELLED' });
  });

  it('starts each job type as the workflow the API starts it as (one registry, lib/jobs/kinds/)', async () => {
    const { workspace, project } = await workspaceWithKey();
    const expected: Array<[JobType, string | null, string]> = [
      ['IMAGE_GENERATION', project.id, 'generateImageWorkflow'],
      ['SOURCE_INGEST', project.id, 'ingestSourceWorkflow'],
      // A workspace-wide knowledge document's job has no project.
      ['KNOWLEDGE_INGEST', null, 'ingestKnowledgeWorkflow'],
    ];
    const ids = await Promise.all(expected.map(([type, projectId]) => queuedJob(workspace.id, projectId, 120, false, type)));
    await reconcile();
    for (const [i, [type, , workflowType]] of expected.entries()) {
      const run = await describeRun(ids[i]!);
      assert.ok(run, `the orphaned ${type} job has its workflow`);
      assert.equal(run.type, workflowType, type);
      assert.ok((await startedMark(ids[i]!)) instanceof Date);
    }
    await db()('jobs').whereIn('id', ids).update({ status: 'CANCELLED' });
  });

  it('the API records a successful start, and not a failed one', async () => {
    const { workspace, project } = await workspaceWithKey();
    const ok = await queuedJob(workspace.id, project.id, 0);
    const okRow = (await db()('jobs').where({ id: ok }).first()) as JobRow;
    await startQueuedJob(okRow, { start: async () => undefined });
    assert.ok((await startedMark(ok)) instanceof Date);
    // A start that fails after the job left QUEUED (only the answer was lost) returns quietly and
    // marks nothing; the job is no longer the reconciler's concern.
    const gone = await queuedJob(workspace.id, project.id, 0);
    await db()('jobs').where({ id: gone }).update({ status: 'RUNNING' });
    const goneRow = (await db()('jobs').where({ id: gone }).first()) as JobRow;
    await startQueuedJob(goneRow, {
      start: async () => {
        throw new Error('unreachable');
      },
    });
    assert.equal(await startedMark(gone), null);
    await db()('jobs').whereIn('id', [ok, gone]).update({ status: 'CANCELLED' });
  });

  it('takes lost starts in turns by workspace: a backlog of one workspace does not hold back another’s job', async () => {
    const noisy = await workspaceWithKey();
    const quiet = await workspaceWithKey();
    // The backlog is older than the quiet workspace's job: oldest first would start the backlog.
    const backlog: string[] = [];
    for (let i = 0; i < 5; i++) backlog.push(await queuedJob(noisy.workspace.id, noisy.project.id, 600 - i * 10));
    const lone = await queuedJob(quiet.workspace.id, quiet.project.id, 120);
    // A pass as large as the number of workspaces with lost starts (earlier tests may have left
    // some): one turn, so one job of each.
    const { rows } = await db().raw(
      `select count(distinct workspace_id)::int as n from jobs
       where status = 'QUEUED' and workflow_started_at is null and created_at < now() - interval '60 seconds'`,
    );
    await reconcileQueuedJobs(db(), 60, rows[0].n);
    await db()('jobs')
      .whereIn('id', [...backlog, lone])
      .update({ status: 'CANCELLED' });
    assert.ok((await startedMark(lone)) instanceof Date, "the quiet workspace's job is started in the first pass");
    const marks = await Promise.all(backlog.map(startedMark));
    assert.deepEqual(
      marks.map((m) => m instanceof Date),
      [true, false, false, false, false],
      "the backlog's oldest job, and only it",
    );
  });

  async function startedMark(jobId: string): Promise<Date | null> {
    const row = await db()('jobs').where({ id: jobId }).first('workflow_started_at');
    return (row?.workflow_started_at as Date | null) ?? null;
  }

  it('reads the unstarted jobs through their partial index, never a sequential or bitmap scan (lib/workspaceTurns.ts)', async () => {
    // An hour: no job of this run's other tests is that old, so the pass starts nothing.
    assertReadThroughIndexes(await statementsOf(() => reconcileQueuedJobs(db(), 3600, 10)), '"workflow_started_at" is null');
  });
});
