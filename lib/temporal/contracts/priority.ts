// Task queue priority and fairness (docs/operations.md "Fairness between workspaces"; Temporal's
// "Task Queue Priority and Fairness"). Every workflow and activity of the service shares one task
// queue, so matching decides who waits. With `matching.enableFairness` on (it brings the
// priority matcher with it), first by `priorityKey` (1 runs first, 3 is the default, 5 last),
// then within a level by `fairnessKey` in proportion to `fairnessWeight` (default 1.0), instead
// of first come, first served. A
// workspace's 10,000-post burst then takes one workspace's share, not the whole queue.
//
// Pure data: workflow code imports it too (the engagement child, the relay's and the
// reconciler's activities), so it must stay free of Node and of lib/config.

/** Temporal's Priority (@temporalio/common), restated so this module stays workflow-safe. */
export interface WorkPriority {
  priorityKey: number;
  fairnessKey: string;
  fairnessWeight?: number;
}

/**
 * The priority of each kind of work, defined once. A person waits for a publish (the minute it
 * was scheduled for) and for a generation, image or ingest they started; webhooks feed a
 * customer's system; the rest is background that can wait out a burst.
 */
export const WORK_PRIORITY = {
  publish: 1,
  generation: 2,
  image: 2,
  ingest: 2,
  review: 2,
  webhook: 3,
  relay: 3,
  engagement: 4,
  connectionHealth: 4,
  metricsSync: 4,
  knowledgeResync: 4,
  maintenance: 4,
  uploadSweep: 4,
} as const satisfies Record<string, number>;

export type WorkKind = keyof typeof WORK_PRIORITY;

/**
 * The fairness key of work that serves every workspace at once (the outbox relay, the
 * reconciler, metrics sync): one key among the workspaces', so it neither starves nor is starved.
 */
export const DEPLOYMENT_FAIRNESS_KEY = 'deployment';

/**
 * The priority of one piece of work: its kind's level, fair-shared by workspace (Temporal keys
 * are at most 64 bytes; workspace ids are 27). `workspaceId` null: work of the whole deployment.
 */
export function workPriority(kind: WorkKind, workspaceId: string | null): WorkPriority {
  return { priorityKey: WORK_PRIORITY[kind], fairnessKey: workspaceId ?? DEPLOYMENT_FAIRNESS_KEY };
}
