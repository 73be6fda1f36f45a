import { proxyActivities } from '@temporalio/workflow';
import type { KnowledgeActivities } from '../activities/knowledge';
import { workPriority } from '../lib/temporal/contracts/priority';
import type { ResyncInput } from '../lib/temporal/contracts/resyncKnowledge';

// Started by the `knowledge-resync` Temporal Schedule (lib/temporal/start/resyncKnowledge.ts): re-fetches
// URL documents that are due, each re-indexed only when its content hash changed.

const { dueUrlDocuments, resyncKnowledgeDocument } = proxyActivities<KnowledgeActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 3 },
  // Every workspace's documents, started by a Schedule (whose action carries no priority in this
  // SDK): background, on the deployment's fairness key (lib/temporal/contracts/priority.ts).
  priority: workPriority('knowledgeResync', null),
});

export async function resyncKnowledgeWorkflow(input: ResyncInput): Promise<{ checked: number; changed: number; failed: number }> {
  let checked = 0;
  let changed = 0;
  let failed = 0;
  // Bounded so one run's history stays small; the next scheduled run continues.
  const due = await dueUrlDocuments({ olderThanSeconds: input.olderThanSeconds, limit: 200 });
  for (const id of due) {
    const r = await resyncKnowledgeDocument(id);
    checked++;
    if (r.changed) changed++;
    if (r.error) failed++;
  }
  return { checked, changed, failed };
}
