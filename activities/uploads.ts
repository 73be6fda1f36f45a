import type { Knex } from 'knex';
import type { ObjectStore } from '../lib/storage/objectStore';

// The upload expiry sweep (ARCHITECTURE.md: "upload expiry ... Temporal Schedules; never delete
// an object that an asset or document still uses"). Run by workflows/sweepUploads.ts on the
// `upload-sweep` schedule. Safe to run twice: deleting a missing object or row is a no-op.

export interface UploadActivityDeps {
  db: Knex;
  store: () => ObjectStore;
}

const BATCH = 500;

export function createUploadActivities({ db, store }: UploadActivityDeps) {
  return {
    /** Deletes one batch of expired handles and their objects; `more` asks for another batch. */
    async sweepExpiredUploads(): Promise<{ deleted: number; keptObjects: number; more: boolean }> {
      const expired = await db('uploads')
        .where('expires_at', '<=', db.fn.now())
        .orderBy('expires_at')
        .limit(BATCH)
        .select('id', 'object_key');
      let keptObjects = 0;
      for (const u of expired) {
        // An asset's key is its content key today, never an upload's; the check keeps the rule
        // true whatever keys a future import path chooses.
        const inUse = await db('media_assets').where({ key: u.object_key }).first('id');
        if (inUse) keptObjects++;
        else await store().delete(u.object_key);
        await db('uploads').where({ id: u.id }).del();
      }
      return { deleted: expired.length, keptObjects, more: expired.length === BATCH };
    },
  };
}

export type UploadActivities = ReturnType<typeof createUploadActivities>;
