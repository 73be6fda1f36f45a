import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { readUntilJobEnds } from '../../lib/jobs/ended';
import { waitForJob } from '../../lib/jobs/queue';
import { JOB_COLUMNS, TERMINAL_STATUSES, type JobRow } from '../../lib/jobs/row';
import { queuedPostGeneration, workspaceWithKey } from '../support/factories';

// Waiting for a job (lib/jobs/ended.ts): woken by `NOTIFY jobs_ended` (migration
// 20261202100200) when the job's row reaches a final status, whoever wrote it; the row read
// again answers. The rechecks here are a minute long, so only the notification can end a wait
// in time.
describe('waiting for a job to end', () => {
  const read = (id: string) => async () => (await db()('jobs').where({ id }).first(JOB_COLUMNS)) as JobRow;
  const ended = (row: JobRow) => TERMINAL_STATUSES.includes(row.status);

  it('wakes when the job reaches a final status, not before; a later write of the row does not wake it again', async () => {
    const ws = await workspaceWithKey();
    const job = await queuedPostGeneration(ws);
    const started = Date.now();
    const waiting = readUntilJobEnds(job.id, read(job.id), ended, { deadline: Date.now() + 30_000, recheckMs: 60_000 });
    await new Promise((r) => setTimeout(r, 300));
    // A status that is not final announces nothing.
    await db()('jobs').where({ id: job.id }).update({ status: 'RUNNING' });
    await new Promise((r) => setTimeout(r, 300));
    await db()('jobs').where({ id: job.id }).update({ status: 'DONE', completed_at: db().fn.now() });
    const row = await waiting;
    const took = Date.now() - started;
    assert.equal(row.status, 'DONE');
    assert.ok(took >= 550 && took < 5_000, `answered ${took} ms after the wait began`);
  });

  it('answers the row as it is at the deadline, and at once when the signal aborts', async () => {
    const ws = await workspaceWithKey();
    const job = await queuedPostGeneration(ws);
    let t = Date.now();
    const late = await readUntilJobEnds(job.id, read(job.id), ended, { deadline: Date.now() + 400, recheckMs: 60_000 });
    assert.equal(late.status, 'QUEUED');
    assert.ok(Date.now() - t >= 390 && Date.now() - t < 3_000, `deadline kept: ${Date.now() - t} ms`);

    const abort = new AbortController();
    t = Date.now();
    setTimeout(() => abort.abort(), 200);
    const cut = await readUntilJobEnds(job.id, read(job.id), ended, { deadline: Infinity, recheckMs: 60_000, signal: abort.signal });
    assert.equal(cut.status, 'QUEUED');
    assert.ok(Date.now() - t < 3_000, `stopped ${Date.now() - t} ms after the abort`);
  });

  it('wait_for_completion_ms answers a job cancelled meanwhile as soon as it is', async () => {
    const ws = await workspaceWithKey();
    const job = await queuedPostGeneration(ws);
    const t = Date.now();
    setTimeout(
      () =>
        db()('jobs')
          .where({ id: job.id })
          .update({ status: 'CANCELLED' })
          .then(() => undefined),
      300,
    );
    const row = await waitForJob(job, 20_000);
    assert.equal(row.status, 'CANCELLED');
    assert.ok(Date.now() - t < 5_000, `answered after ${Date.now() - t} ms`);
  });
});
