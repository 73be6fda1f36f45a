// Unsettled AI spend (docs/generation.md "Spend and budgets"): a final job whose settlement did
// not follow its COMMIT, found with `bin/admin jobs unsettled` and settled with
// `bin/admin jobs settle-spend`, through the reconciler's own pass, once.

import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { finishJob, type FinalState } from '../../lib/jobs/finish';
import { progressNow } from '../../lib/jobs/row';
import { settleJobSpend } from '../../lib/spend/settlement';
import { queuedPostGeneration, workspaceWithKey } from '../support/factories';
import { fails, ok } from '../support/admin';

/** A generation accepted (spend reserved), then moved to its final state by a process that died before settling. */
async function unsettledJob(
  ws: { workspace: { id: string }; project: { id: string; type: string }; keyId: string },
  final: FinalState,
  costCents: number,
) {
  const job = await queuedPostGeneration(ws);
  await db().transaction(async (trx) => {
    await trx('jobs').where({ id: job.id }).update({ cost_cents: costCents });
    await finishJob(trx, job.id, final);
  });
  return job.id;
}

async function meters(workspaceId: string) {
  const day = await db()('ai_spend_days').where({ workspace_id: workspaceId }).first('spent_cents', 'reserved_cents');
  const week = await db()('ai_budget_weeks').where({ workspace_id: workspaceId }).first('spent_cents', 'reserved_cents');
  return { day: [day.spent_cents, day.reserved_cents], week: [week.spent_cents, week.reserved_cents] };
}

describe('operator commands for unsettled AI spend (bin/admin jobs unsettled, settle-spend)', function () {
  this.timeout(120_000);
  const created: string[] = [];

  after(async () => {
    // Leave nothing for the reconciler passes of the suites that run after this one.
    for (const id of created) await settleJobSpend(db(), id);
  });

  it('lists a final job left unsettled, settles it once, and a second run settles nothing', async () => {
    const ws = await workspaceWithKey();
    const other = await workspaceWithKey();
    const failed = await unsettledJob(ws, { status: 'FAILED', progress: progressNow(1, 'Failed'), errorCode: 'llm_bad_request' }, 3);
    const done = await unsettledJob(ws, { status: 'DONE', progress: progressNow(1, 'Done') }, 4);
    const elsewhere = await unsettledJob(other, { status: 'CANCELLED', progress: progressNow(0, 'Cancelled') }, 0);
    created.push(failed, done, elsewhere);
    // Both reservations (5 cents each) still count; neither cost is on the meters.
    assert.deepEqual(await meters(ws.workspace.id), { day: [0, 10], week: [0, 10] });

    const listed = await ok(['jobs', 'unsettled', '--workspace', ws.workspace.id]);
    assert.equal(listed.workspaceId, ws.workspace.id);
    assert.equal(listed.total, 2);
    assert.equal(listed.reservedCents, 10);
    assert.deepEqual(
      listed.jobs.map((j: any) => [j.id, j.workspaceId, j.type, j.status, j.reservedCents, j.costCents]),
      [
        [failed, ws.workspace.id, 'POST_GENERATION', 'FAILED', 5, 3],
        [done, ws.workspace.id, 'POST_GENERATION', 'DONE', 5, 4],
      ],
      'oldest first',
    );
    for (const j of listed.jobs) {
      assert.ok(Date.parse(j.completedAt) <= Date.now());
      assert.ok(Number.isInteger(j.ageSeconds) && j.ageSeconds >= 0, JSON.stringify(j));
    }
    const limited = await ok(['jobs', 'unsettled', '--workspace', ws.workspace.id, '--limit', '1']);
    assert.deepEqual([limited.total, limited.jobs.length, limited.jobs[0].id], [2, 1, failed]);
    // Without --workspace, every workspace's.
    const all = await ok(['jobs', 'unsettled', '--limit', '1000']);
    assert.ok(all.total >= 3);
    for (const id of [failed, done, elsewhere])
      assert.ok(
        all.jobs.some((j: any) => j.id === id),
        id,
      );

    // Settled at once (no reconciler grace), the reservations replaced by the costs, once.
    const settled = await ok(['jobs', 'settle-spend', '--workspace', ws.workspace.id]);
    assert.deepEqual(settled, { workspaceId: ws.workspace.id, settled: 2, remaining: 0, remainingReservedCents: 0 });
    assert.deepEqual(await meters(ws.workspace.id), { day: [7, 0], week: [7, 0] });
    assert.equal((await ok(['jobs', 'unsettled', '--workspace', ws.workspace.id])).total, 0);
    const again = await ok(['jobs', 'settle-spend', '--workspace', ws.workspace.id]);
    assert.deepEqual(again, { workspaceId: ws.workspace.id, settled: 0, remaining: 0, remainingReservedCents: 0 });
    assert.deepEqual(await meters(ws.workspace.id), { day: [7, 0], week: [7, 0] });
    // The finisher's own late attempt changes nothing either.
    assert.equal(await settleJobSpend(db(), failed), false);

    // The other workspace was left alone; --limit bounds a run.
    assert.deepEqual(await meters(other.workspace.id), { day: [0, 5], week: [0, 5] });
    const one = await ok(['jobs', 'settle-spend', '--workspace', other.workspace.id, '--limit', '1']);
    assert.deepEqual([one.settled, one.remaining], [1, 0]);
    assert.deepEqual(await meters(other.workspace.id), { day: [0, 0], week: [0, 0] });
  });

  it('refuses a malformed command line (exit 2) and an unknown workspace (exit 1)', async () => {
    await fails(['jobs', 'unsettled', '--limit', '0'], 2, /--limit must be at least 1/);
    await fails(['jobs', 'unsettled', '--limit', 'ten'], 2, /--limit must be a whole number/);
    await fails(['jobs', 'settle-spend', '--limit', '0'], 2, /--limit must be at least 1/);
    await fails(['jobs', 'settle-spend', '--workspace', ''], 2, /--workspace is required/);
    await fails(['jobs', 'unsettled', '--workspace', 'org_nope'], 1, /no workspace org_nope/);
    await fails(['jobs', 'settle-spend', '--workspace', 'org_nope'], 1, /no workspace org_nope/);
  });
});
