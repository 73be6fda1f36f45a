import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { config } from '../../config';
import { SWEEP_UPLOADS } from '../contracts/sweepUploads';

// The starter of the upload expiry sweep (lib/temporal/contracts/sweepUploads.ts): its Temporal
// Schedule (ARCHITECTURE.md "Temporal: what runs where"). Created by the worker at start when missing; an existing one is left as it is so an
// operator's pause or edit survives restarts.

export async function ensureUploadSweepSchedule(client: Client): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: SWEEP_UPLOADS.scheduleId,
      spec: { intervals: [{ every: `${config.uploads.sweepIntervalSeconds}s` }] },
      action: {
        type: 'startWorkflow',
        workflowType: SWEEP_UPLOADS.type,
        args: [],
        taskQueue: config.temporalTaskQueue,
        workflowId: SWEEP_UPLOADS.id(),
      },
      // A slow run is never doubled: the next tick is skipped while one is running.
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      state: { note: 'Deletes expired upload handles and objects no asset uses (docs/media.md)' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
