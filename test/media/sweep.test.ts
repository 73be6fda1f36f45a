import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { mintUpload } from '../../lib/media/uploads';
import { SWEEP_UPLOADS } from '../../lib/temporal/contracts/sweepUploads';
import { ensureUploadSweepSchedule } from '../../lib/temporal/start/sweepUploads';
import { objectStore } from '../../lib/storage/objectStore';
import { temporalClient } from '../../lib/temporal/client';
import { sweepUploadsWorkflow } from '../../workflows/sweepUploads';
import { workspaceWithKey } from '../support/factories';
import { useTestWorker } from '../support/worker';
import { png } from './images';

// The upload expiry sweep on Temporal (docs/media.md "Expiry"): expired handles and their
// objects go; an object an asset still uses stays; live handles are untouched.

describe('upload expiry sweep (Temporal workflow + schedule, embedded store)', function () {
  this.timeout(60_000);
  const taskQueue = `sweep-${newId('request')}`;
  useTestWorker({ taskQueue });

  async function uploaded(workspaceId: string) {
    const image = png(5, 5);
    const u = await mintUpload({
      workspaceId,
      projectId: null,
      purpose: 'media',
      fileName: 'a.png',
      contentType: 'image/png',
      bytes: image.length,
    });
    const r = await fetch(u.url, { method: 'PUT', headers: u.headers, body: image });
    assert.equal(r.status, 200);
    return u;
  }

  it('deletes expired handles and their objects, never an object an asset uses, and leaves live handles', async () => {
    const { workspace } = await workspaceWithKey({ projects: 0 });
    const expired = await uploaded(workspace.id);
    const used = await uploaded(workspace.id);
    const live = await uploaded(workspace.id);
    const keyOf = async (id: string) => (await db()('uploads').where({ id }).first()).object_key as string;
    const [expiredKey, usedKey, liveKey] = [await keyOf(expired.id), await keyOf(used.id), await keyOf(live.id)];
    await db()('uploads')
      .whereIn('id', [expired.id, used.id])
      .update({ expires_at: new Date(Date.now() - 60_000) });
    // An asset that points at the upload's object itself.
    await db()('media_assets').insert({
      id: newId('mediaAsset'),
      workspace_id: workspace.id,
      key: usedKey,
      sha256: 'f'.repeat(64),
      mime_type: 'image/png',
      bytes: 10,
      width: 5,
      height: 5,
    });

    const client = await temporalClient();
    const result = await client.workflow.execute(sweepUploadsWorkflow, {
      taskQueue,
      workflowId: `sweep-test-${newId('request')}`,
      args: [],
    });
    assert.ok((result as { deleted: number }).deleted >= 2);

    assert.equal(await db()('uploads').where({ id: expired.id }).first(), undefined);
    assert.equal(await db()('uploads').where({ id: used.id }).first(), undefined);
    assert.ok(await db()('uploads').where({ id: live.id }).first());
    assert.equal(await objectStore().head(expiredKey), null, 'the expired object is gone');
    assert.ok(await objectStore().head(usedKey), 'an object an asset uses stays');
    assert.ok(await objectStore().head(liveKey), 'a live handle keeps its object');
  });

  it('the schedule exists once, at the configured interval', async () => {
    const client = await temporalClient();
    await ensureUploadSweepSchedule(client);
    await ensureUploadSweepSchedule(client);
    const d = await client.schedule.getHandle(SWEEP_UPLOADS.scheduleId).describe();
    assert.equal(d.action.type, 'startWorkflow');
    assert.equal((d.action as { workflowType: string }).workflowType, 'sweepUploadsWorkflow');
    assert.equal(d.spec.intervals?.[0]?.every, config.uploads.sweepIntervalSeconds * 1000);
  });
});
