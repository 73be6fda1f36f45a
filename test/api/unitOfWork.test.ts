import assert from 'node:assert/strict';
import { afterCommit, answerAfterCommit, createKnex, db, inUnitOfWork, unitOfWork } from '../../lib/db';
import { Workspace } from '../../lib/models';
import { workspaceWithKey } from '../support/factories';

// lib/db.ts unitOfWork, the transaction an idempotent request's writes and its stored answer
// share (docs/reliability.md "Idempotency").

describe('unit of work (lib/db.ts)', () => {
  const ignore = () => undefined;
  // Another connection: what the rest of the world sees while a unit runs.
  const outside = createKnex(undefined, { max: 1 });
  after(() => outside.destroy());

  it("runs db() and the models in one transaction; work queued for after the COMMIT sees the unit's writes from another connection", async () => {
    const { workspace } = await workspaceWithKey({ projects: 0 });
    const seen: string[] = [];
    const { value } = await unitOfWork(async () => {
      assert.equal(inUnitOfWork(), true);
      await db()('workspaces').where({ id: workspace.id }).update({ name: 'Renamed in the unit' });
      // Not visible outside before the COMMIT.
      seen.push((await outside('workspaces').where({ id: workspace.id }).first('name')).name);
      // A model reads the unit's own write.
      seen.push((await Workspace.query().findById(workspace.id))!.name);
      await afterCommit(async () => {
        seen.push((await outside('workspaces').where({ id: workspace.id }).first('name')).name);
        assert.equal(inUnitOfWork(), false);
      });
      return 'answer';
    }, ignore);
    assert.equal(value, 'answer');
    assert.deepEqual(seen, [workspace.name, 'Renamed in the unit', 'Renamed in the unit']);
  });

  it('rolls every statement back when it throws, and runs nothing queued for after the COMMIT', async () => {
    const { workspace } = await workspaceWithKey({ projects: 0 });
    let ran = false;
    await assert.rejects(
      unitOfWork(async () => {
        await db()('workspaces').where({ id: workspace.id }).update({ name: 'Never committed' });
        // A nested transaction is a savepoint of the unit's.
        await db().transaction((trx) => trx('workspaces').where({ id: workspace.id }).update({ plan: 'ENTERPRISE' }));
        await afterCommit(async () => {
          ran = true;
        });
        throw new Error('the handler failed');
      }, ignore),
      /the handler failed/,
    );
    const row = await outside('workspaces').where({ id: workspace.id }).first('name', 'plan');
    assert.equal(row.name, workspace.name);
    assert.notEqual(row.plan, 'ENTERPRISE');
    assert.equal(ran, false);
  });

  it('answers now inside a unit and later after its work; outside a unit the later answer is the answer', async () => {
    const { later } = await unitOfWork(() => answerAfterCommit('queued', async () => 'done'), ignore);
    assert.equal(await later!(), 'done');
    assert.equal(await answerAfterCommit('queued', async () => 'done'), 'done');
  });

  it('leaves what outlives the unit (a timer set inside it) to the pool, not to the ended transaction', async () => {
    let fromTimer!: Promise<number>;
    await unitOfWork(async () => {
      fromTimer = new Promise((resolve, reject) =>
        setTimeout(() => {
          db()
            .raw('select 1 as n')
            .then((r: { rows: Array<{ n: number }> }) => resolve(r.rows[0]!.n), reject);
        }, 50),
      );
    }, ignore);
    assert.equal(await fromTimer, 1);
  });
});
