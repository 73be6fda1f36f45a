import { proxyActivities } from '@temporalio/workflow';
import type { UploadActivities } from '../activities/uploads';
import { workPriority } from '../lib/temporal/contracts/priority';

// Started by the `upload-sweep` Temporal Schedule (lib/temporal/start/sweepUploads.ts): removes expired
// upload handles and their never-used objects in batches.

const { sweepExpiredUploads } = proxyActivities<UploadActivities>({
  // Deleting is idempotent (a missing object or row is a no-op), so retries are free.
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes' },
  // Started by a Schedule (whose action carries no priority in this SDK): background, on the
  // deployment's fairness key (lib/temporal/contracts/priority.ts).
  priority: workPriority('uploadSweep', null),
});

export async function sweepUploadsWorkflow(): Promise<{ deleted: number; keptObjects: number }> {
  let deleted = 0;
  let keptObjects = 0;
  // Bounded so one run's history stays small; the next scheduled run continues.
  for (let i = 0; i < 100; i++) {
    const r = await sweepExpiredUploads();
    deleted += r.deleted;
    keptObjects += r.keptObjects;
    if (!r.more) break;
  }
  return { deleted, keptObjects };
}
