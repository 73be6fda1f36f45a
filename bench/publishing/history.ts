import type { Client } from '@temporalio/client';

// Where a post's lag was spent, read from its publish workflow's history: the timer firing,
// the workflow task that reacts to it, the activity waiting in the task queue for a worker
// slot, and the activity itself (DB pool wait + transaction + network call).

export interface PostTimeline {
  postId: string;
  /** Milliseconds after the post's due time. */
  timerFired: number | null;
  /** Workflow task after the timer: scheduled → started (queue wait) and started → completed. */
  wfTaskQueue: number | null;
  wfTaskRun: number | null;
  /** publishPost: scheduled → started (last attempt) and started → completed. */
  activityScheduled: number | null;
  activityQueue: number | null;
  activityRun: number | null;
  activityAttempts: number;
  workflowClosed: number | null;
  /** Workflow tasks that timed out or failed (e.g. held by the killed worker). */
  wfTaskTimeouts: number;
}

type Ts = { seconds?: { toNumber(): number } | number | string | null; nanos?: number | null } | null | undefined;

function tsMs(ts: Ts): number | null {
  if (!ts || ts.seconds == null) return null;
  const s = typeof ts.seconds === 'object' ? ts.seconds.toNumber() : Number(ts.seconds);
  return s * 1000 + (ts.nanos ?? 0) / 1e6;
}

export async function timeline(client: Client, workflowId: string, postId: string, dueMs: number): Promise<PostTimeline> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const out: PostTimeline = {
    postId, timerFired: null, wfTaskQueue: null, wfTaskRun: null, activityScheduled: null, activityQueue: null, activityRun: null,
    activityAttempts: 0, workflowClosed: null, wfTaskTimeouts: 0,
  };
  const rel = (ms: number | null) => (ms === null ? null : ms - dueMs);
  let firedAt: number | null = null;
  let wfScheduled: number | null = null;
  let wfStarted: number | null = null;
  let publishScheduledId: string | null = null;
  let publishScheduledAt: number | null = null;
  let publishStartedAt: number | null = null;
  for (const e of events) {
    const at = tsMs(e.eventTime as Ts);
    if (e.workflowTaskTimedOutEventAttributes || e.workflowTaskFailedEventAttributes) out.wfTaskTimeouts++;
    if (e.timerFiredEventAttributes) {
      firedAt = at;
      out.timerFired = rel(at);
      continue;
    }
    if (firedAt !== null && out.wfTaskRun === null) {
      if (e.workflowTaskScheduledEventAttributes) wfScheduled = at;
      if (e.workflowTaskStartedEventAttributes) wfStarted = at;
      if (e.workflowTaskCompletedEventAttributes && wfScheduled !== null && wfStarted !== null && at !== null) {
        out.wfTaskQueue = wfStarted - wfScheduled;
        out.wfTaskRun = at - wfStarted;
      }
    }
    const sched = e.activityTaskScheduledEventAttributes;
    if (sched && sched.activityType?.name === 'publishPost') {
      publishScheduledId = String(e.eventId);
      publishScheduledAt = at;
      out.activityScheduled = rel(at);
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started && publishScheduledId !== null && String(started.scheduledEventId) === publishScheduledId) {
      publishStartedAt = at;
      out.activityAttempts = started.attempt ?? 1;
      if (publishScheduledAt !== null && at !== null) out.activityQueue = at - publishScheduledAt;
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done && publishScheduledId !== null && String(done.scheduledEventId) === publishScheduledId && publishStartedAt !== null && at !== null) {
      out.activityRun = at - publishStartedAt;
    }
    if (e.workflowExecutionCompletedEventAttributes) out.workflowClosed = rel(at);
  }
  return out;
}

/** Timelines of many workflows, a few fetches at a time. */
export async function timelines(client: Client, items: Array<{ workflowId: string; postId: string; dueMs: number }>, concurrency = 8): Promise<{ ok: PostTimeline[]; errors: number }> {
  const ok: PostTimeline[] = [];
  let errors = 0;
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const it = items[next++]!;
      try {
        ok.push(await timeline(client, it.workflowId, it.postId, it.dueMs));
      } catch {
        errors++;
      }
    }
  }));
  return { ok, errors };
}
