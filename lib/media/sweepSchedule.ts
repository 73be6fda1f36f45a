import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { sweepUploadsWorkflow } from '../../workflows/sweepUploads';
import { config } from '../config';

// The Temporal Schedule behind the upload expiry sweep (ARCHITECTURE.md "Temporal: what runs
// where"). Created by the worker at start when missing; an existing one is left as it is so an
// operator's pause or edit survives restarts.

export const UPLOAD_SWEEP_SCHEDULE_ID = 'upload-sweep';

export async function ensureUploadSweepSchedule(client: Client): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: UPLOAD_SWEEP_SCHEDULE_ID,
      spec: { intervals: [{ every: `${config.uploads.sweepIntervalSeconds}s` }] },
      action: {
        type: 'startWorkflow',
        workflowType: sweepUploadsWorkflow,
        args: [],
        taskQueue: config.temporalTaskQueue,
        workflowId: 'upload-sweep-run',
      },
      // A slow run is never doubled: the next tick is skipped while one is running.
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      state: { note: 'Deletes expired upload handles and objects no asset uses (docs/media.md)' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
