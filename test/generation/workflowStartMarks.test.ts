import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { markWorkflowStarted, MARKS_PER_UPDATE } from '../../lib/jobs/queue';
import { workspaceWithKey } from '../support/factories';
import { statementsOf } from '../support/statements';

// lib/jobs/queue.ts markWorkflowStarted: the marks a process gathered go out in UPDATEs of at
// most MARKS_PER_UPDATE ids, so however many pile up no statement exceeds Postgres' 65,535
// parameters (and the marks are not lost to the error such a statement would get).

describe('workflow-start marks', function () {
  this.timeout(60_000);

  it('marks more jobs than one statement could bind, in UPDATEs of at most MARKS_PER_UPDATE ids', async () => {
    const { workspace, project } = await workspaceWithKey();
    const jobs = [newId('job'), newId('job')];
    for (const id of jobs)
      await db()('jobs').insert({
        id,
        workspace_id: workspace.id,
        project_id: project.id,
        type: 'POST_GENERATION',
        status: 'QUEUED',
        input: JSON.stringify({ source: { type: 'text' }, sourceText: 'x' }),
        progress: JSON.stringify({ progress: 0, updatedAt: new Date().toISOString(), message: 'Waiting for a worker' }),
        estimated_completion_ms: 1000,
      });
    // One real job first and one last, among ids of jobs that do not exist (marks of jobs since removed).
    const ids = [jobs[0]!, ...Array.from({ length: 70_000 }, () => newId('job')), jobs[1]!];

    const updates = (await statementsOf(() => markWorkflowStarted(ids)))
      .filter((q) => /^update "jobs" set "workflow_started_at"/.test(q.sql))
      .map((q) => q.bindings.length);

    assert.equal(updates.length, Math.ceil(ids.length / MARKS_PER_UPDATE));
    assert.ok(Math.max(...updates) <= MARKS_PER_UPDATE + 1, `bindings per UPDATE: ${Math.max(...updates)}`);
    const marked = await db()('jobs').whereIn('id', jobs).whereNotNull('workflow_started_at').count('* as n').first();
    assert.equal(Number(marked!.n), 2);
  });
});
