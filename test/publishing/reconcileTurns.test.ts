import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { unsyncedSchedules } from '../../lib/posts/afterCommit';
import { createProject, createWorkspace } from '../../admin/provision';
import { assertReadThroughIndexes, statementsOf } from '../support/statements';

// The reconciler's share of lost schedule signals (lib/posts/afterCommit.ts unsyncedSchedules)
// is taken in turns by workspace: one workspace's thousands of missed signals (Temporal down
// through its bulk reschedule) do not hold another's post back for passes on end.
describe('reconciler: lost schedule signals taken in turns by workspace', () => {
  it('a pass gives every workspace with a lost signal a turn, soonest due first within each', async () => {
    const inserted: string[] = [];
    const unsynced = async (name: string, dueInMinutes: number[]) => {
      const ws = await createWorkspace({ name, plan: 'BUSINESS' });
      const project = await createProject({ workspaceId: ws.id, type: 'PERSONAL_BRAND', name: `${name} person` });
      const rows = dueInMinutes.map((m) => ({
        id: newId('post'),
        workspace_id: ws.id,
        project_id: project.id,
        status: 'scheduled',
        title: '',
        content: 'A schedule whose signal was lost',
        content_type: 'PERSONAL',
        scheduled_at: new Date(Date.now() + m * 60_000),
        schedule_version: 2,
        workflow_synced_version: 1,
      }));
      await db()('posts').insert(rows);
      inserted.push(...rows.map((r) => r.id));
      return rows.map((r) => r.id);
    };
    try {
      // The burst is due before the quiet post: soonest first alone would take the burst.
      const burst = await unsynced('Burst', [60, 61, 62, 63, 64, 65, 66, 67]);
      const [quietFirst, quietLater] = await unsynced('Quiet', [120, 240]);
      const { rows } = await db().raw(
        'select count(distinct workspace_id)::int as n from posts where workflow_synced_version < schedule_version',
      );
      const pass = (await unsyncedSchedules(db(), rows[0].n)).map((p) => p.id);
      assert.ok(pass.includes(quietFirst!), "the quiet workspace's post is in the first pass");
      assert.ok(!pass.includes(quietLater!), 'its second post waits for the next turn');
      assert.deepEqual(
        pass.filter((id) => burst.includes(id)),
        [burst[0]],
        "the burst's soonest post, and only it",
      );
    } finally {
      // Left for the real reconciler they would be signalled: mark them known.
      await db()('posts').whereIn('id', inserted).update({ workflow_synced_version: 2, status: 'draft', scheduled_at: null });
    }
  });

  it('reads the lost signals through their partial index, never a sequential or bitmap scan (lib/workspaceTurns.ts)', async () => {
    assertReadThroughIndexes(await statementsOf(() => unsyncedSchedules(db(), 10)), 'workflow_synced_version < schedule_version');
  });
});
