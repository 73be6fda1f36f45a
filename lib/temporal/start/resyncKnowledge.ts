import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { config } from '../../config';
import { RESYNC_KNOWLEDGE, type ResyncInput } from '../contracts/resyncKnowledge';

// The starter of the URL knowledge re-sync (lib/temporal/contracts/resyncKnowledge.ts): its
// Temporal Schedule (ARCHITECTURE.md "Temporal: what runs where"). Created by the worker at start
// when missing; an existing one is left as it is so an operator's pause or edit survives restarts.

export async function ensureKnowledgeResyncSchedule(client: Client): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: RESYNC_KNOWLEDGE.scheduleId,
      spec: { intervals: [{ every: `${config.knowledge.resyncIntervalSeconds}s` }] },
      action: {
        type: 'startWorkflow',
        workflowType: RESYNC_KNOWLEDGE.type,
        args: [{ olderThanSeconds: config.knowledge.resyncIntervalSeconds } satisfies ResyncInput],
        taskQueue: config.temporalTaskQueue,
        workflowId: RESYNC_KNOWLEDGE.id(),
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      state: { note: 'Re-fetches URL knowledge documents; re-indexes only changed content (docs/knowledge.md)' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
