import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { resyncKnowledgeWorkflow } from '../../workflows/resyncKnowledge';
import { config } from '../config';

// The Temporal Schedule behind the URL knowledge re-sync (ARCHITECTURE.md "Temporal: what runs
// where"). Created by the worker at start when missing; an existing one is left as it is so an
// operator's pause or edit survives restarts.

export const KNOWLEDGE_RESYNC_SCHEDULE_ID = 'knowledge-resync';

export async function ensureKnowledgeResyncSchedule(client: Client): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: KNOWLEDGE_RESYNC_SCHEDULE_ID,
      spec: { intervals: [{ every: `${config.knowledge.resyncIntervalSeconds}s` }] },
      action: {
        type: 'startWorkflow',
        workflowType: resyncKnowledgeWorkflow,
        args: [{ olderThanSeconds: config.knowledge.resyncIntervalSeconds }],
        taskQueue: config.temporalTaskQueue,
        workflowId: 'knowledge-resync-run',
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      state: { note: 'Re-fetches URL knowledge documents; re-indexes only changed content (docs/knowledge.md)' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
