import { config } from '../config';

// What a publish workflow waits for: the post's schedule as of one version. The API builds it
// from the row it has just committed and hands it to the workflow in the start input and in the
// `scheduleChanged` signal, so the workflow arms its timer without reading the database; the
// row stays the truth (the publish step re-checks the version under the row lock).

export interface ScheduleSnapshot {
  status: string;
  version: number;
  scheduledAtMs: number | null;
  delaySeconds: number;
  retryWindowSeconds: number;
  retryBaseSeconds: number;
  /**
   * The post's project's calendar timezone (spec 4.4), for the times the workflow shows an
   * operator (docs/operations.md "What the workflows show"); absent: UTC. Display only: the
   * instants above decide everything.
   */
  timeZone?: string;
  /**
   * The post's turn among its workspace's posts due at the same instant (./turns.ts): the
   * workflow fires this many milliseconds after the fire time. Absent: 0.
   */
  turnMs?: number;
}

export interface ScheduleRow {
  status: string;
  schedule_version: number;
  scheduled_at: Date | null;
  deleted_at?: Date | null;
  /** The project's timezone, when the row was read with it. */
  timezone?: string | null;
}

/** The snapshot of a row as read or just committed; null for a deleted post (nothing to wait for). */
export function scheduleSnapshot(row: ScheduleRow): ScheduleSnapshot | null {
  if (row.deleted_at) return null;
  return {
    status: row.status,
    version: row.schedule_version,
    scheduledAtMs: row.scheduled_at ? new Date(row.scheduled_at).getTime() : null,
    delaySeconds: config.publish.delaySeconds,
    retryWindowSeconds: config.publish.retryWindowSeconds,
    retryBaseSeconds: config.publish.retryBaseSeconds,
    ...(row.timezone ? { timeZone: row.timezone } : {}),
  };
}

/** When a scheduled snapshot is due to publish (its time plus the publish delay), before its turn; null when nothing is to publish. */
export function fireTimeMs(schedule: ScheduleSnapshot): number | null {
  if (schedule.status !== 'scheduled' || schedule.scheduledAtMs === null) return null;
  return schedule.scheduledAtMs + schedule.delaySeconds * 1000;
}

/** True when the row carries the columns a snapshot is built from (the reconciler's rows do, a bare id does not). */
export function hasScheduleColumns(row: object): row is ScheduleRow {
  return 'status' in row && 'scheduled_at' in row && 'schedule_version' in row;
}

/**
 * Whether a schedule change must wake the post's publish workflow now (a signal, which runs a
 * workflow task at once). It need not when the workflow knows the version before the change and
 * sleeps toward that version's fire time, at least config.publish.leaveAsleepLeadMs away, and the change takes
 * the post off the schedule or moves it later by more than a turn (config.publish.turnSpreadMs):
 * the workflow then wakes at the time it was armed for, before the new one, its publish step
 * finds the version moved under the row lock (`stale`), and it reads the row (docs/publishing.md
 * "Moves that leave the workflow asleep"). The lead keeps a workflow that may be firing, or
 * retrying after a failed attempt, out of the rule, whatever the skew between the clocks.
 */
export function wakesWorkflow(
  before: ScheduleRow & { workflow_synced_version?: number },
  after: { status?: string; scheduled_at?: Date | null; deleted_at?: Date | null },
  nowMs: number,
): boolean {
  // A workflow never told of the version before (its signal lost, or none yet) is owed one anyway.
  if (before.workflow_synced_version === undefined || before.workflow_synced_version !== before.schedule_version) return true;
  const armed = scheduleSnapshot(before);
  const fireAt = armed ? fireTimeMs(armed) : null;
  if (fireAt === null || fireAt - nowMs < config.publish.leaveAsleepLeadMs) return true;
  const status = after.status ?? before.status;
  const at = after.scheduled_at !== undefined ? after.scheduled_at : before.scheduled_at;
  if (after.deleted_at || status !== 'scheduled' || at === null) return false;
  return at.getTime() < armed!.scheduledAtMs! + config.publish.turnSpreadMs;
}
