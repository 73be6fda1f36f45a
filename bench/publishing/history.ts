import type { Client } from '@temporalio/client';
import pLimit from 'p-limit';
import { quantile } from '../harness/format';

// Where a post's lag was spent, read from its publish workflow's history: the timer firing,
// the workflow task that reacts to it, the activity waiting in the task queue for a worker
// slot, and the activity itself (DB pool wait + transaction + network call).

export type PostTimeline = Awaited<ReturnType<typeof timeline>>;

type Ts = { seconds?: { toNumber(): number } | number | string | null; nanos?: number | null } | null | undefined;

function tsMs(ts: Ts): number | null {
  if (!ts || ts.seconds == null) return null;
  const s = typeof ts.seconds === 'object' ? ts.seconds.toNumber() : Number(ts.seconds);
  return s * 1000 + (ts.nanos ?? 0) / 1e6;
}

// temporal.api.enums.v1.TimeoutType
const START_TO_CLOSE = 1;
const SCHEDULE_TO_START = 2;

export async function timeline(client: Client, workflowId: string, postId: string, dueMs: number) {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  // Milliseconds after the post's due time (negative: before it); null where the history has no such event.
  const out = {
    postId,
    // The workflow's first task (it loads the schedule), and its timer being set: null when the
    // schedule was loaded after the due time, so no timer was needed.
    firstTaskStarted: null as number | null,
    timerStarted: null as number | null,
    timerFired: null as number | null,
    /** Timer fired → a worker starts the workflow task that reacts to it (queue wait, including any sticky-queue timeout). */
    wfTaskWait: null as number | null,
    /** That workflow task: started → completed. */
    wfTaskRun: null as number | null,
    /** Workflow tasks after the timer that timed out: not picked up from a worker's sticky queue in time (schedule-to-start), or held by a worker that died (start-to-close). */
    stickyTimeouts: 0,
    startToCloseTimeouts: 0,
    /** publishPost scheduled, after due; scheduled → started (last attempt, so retries' waits included); started → completed. */
    activityScheduled: null as number | null,
    activityQueue: null as number | null,
    activityRun: null as number | null,
    activityAttempts: 0,
    /** publishPost completed → workflow completed (the last workflow task). */
    closeWait: null as number | null,
    /** Events in the workflow's history: what the capacity model counts per post (docs/publishing.md). */
    historyEvents: events.length,
  };
  const rel = (ms: number | null) => (ms === null ? null : ms - dueMs);
  let firedAt: number | null = null;
  let wfStarted: number | null = null;
  let publishScheduledId: string | null = null;
  let publishScheduledAt: number | null = null;
  let publishStartedAt: number | null = null;
  let publishDoneAt: number | null = null;
  // A workflow started with a start delay to its fire time (lib/temporal/start/publishPost.ts) has no
  // timer: the server holds its first workflow task until then. Its start counts as the timer
  // set and its first workflow task scheduled as the timer fired; a timer armed later (after a
  // signal ended the delay early) takes their place.
  let delayed = false;
  const ofPublish = (scheduledEventId: unknown) => publishScheduledId !== null && String(scheduledEventId) === publishScheduledId;
  for (const e of events) {
    const at = tsMs(e.eventTime as Ts);
    const startedAttrs = e.workflowExecutionStartedEventAttributes;
    if (startedAttrs && (tsMs(startedAttrs.firstWorkflowTaskBackoff as Ts) ?? 0) > 0) {
      delayed = true;
      out.timerStarted = rel(at);
    }
    if (delayed && e.workflowTaskScheduledEventAttributes && firedAt === null) {
      firedAt = at;
      out.timerFired = rel(at);
      continue;
    }
    if (e.workflowTaskStartedEventAttributes && out.firstTaskStarted === null) out.firstTaskStarted = rel(at);
    if (e.timerStartedEventAttributes) out.timerStarted = rel(at);
    if (e.timerFiredEventAttributes) {
      firedAt = at;
      out.timerFired = rel(at);
      wfStarted = null;
      out.wfTaskWait = null;
      out.wfTaskRun = null;
      continue;
    }
    if (firedAt !== null) {
      const timedOut = e.workflowTaskTimedOutEventAttributes;
      if (timedOut) {
        if (timedOut.timeoutType === SCHEDULE_TO_START) out.stickyTimeouts++;
        else if (timedOut.timeoutType === START_TO_CLOSE) out.startToCloseTimeouts++;
      }
      if (e.workflowTaskStartedEventAttributes && wfStarted === null && at !== null) {
        wfStarted = at;
        out.wfTaskWait = at - firedAt;
      }
      if (e.workflowTaskCompletedEventAttributes && wfStarted !== null && out.wfTaskRun === null && at !== null)
        out.wfTaskRun = at - wfStarted;
    }
    const sched = e.activityTaskScheduledEventAttributes;
    if (sched && sched.activityType?.name === 'publishPost') {
      publishScheduledId = String(e.eventId);
      publishScheduledAt = at;
      out.activityScheduled = rel(at);
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started && ofPublish(started.scheduledEventId)) {
      publishStartedAt = at;
      out.activityAttempts = started.attempt ?? 1;
      if (publishScheduledAt !== null && at !== null) out.activityQueue = at - publishScheduledAt;
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done && ofPublish(done.scheduledEventId) && publishStartedAt !== null && at !== null) {
      out.activityRun = at - publishStartedAt;
      publishDoneAt = at;
    }
    if (e.workflowExecutionCompletedEventAttributes && publishDoneAt !== null && at !== null) out.closeWait = at - publishDoneAt;
  }
  return out;
}

/** A compact history for a report: event name, milliseconds after the due time, attempt. */
export async function compactHistory(client: Client, workflowId: string, dueMs: number) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).map((e) => {
    const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]) ?? 'unknown';
    const attrs = (e as Record<string, any>)[key] ?? {};
    const at = tsMs(e.eventTime as Ts);
    const detail: string | undefined = attrs.activityType?.name || attrs.signalName || attrs.identity;
    return {
      id: Number(e.eventId),
      event: key.replace(/EventAttributes$/, ''),
      atMs: at === null ? null : Math.round(at - dueMs),
      ...(attrs.attempt ? { attempt: attrs.attempt as number } : {}),
      ...(detail ? { detail } : {}),
    };
  });
}

/** Timelines of many workflows, a few fetches at a time; a history that cannot be read counts as an error. */
export async function timelines(client: Client, items: Array<{ workflowId: string; postId: string; dueMs: number }>, concurrency = 16) {
  const all = await pLimit(concurrency).map(items, (it) => timeline(client, it.workflowId, it.postId, it.dueMs).catch(() => null));
  const ok = all.filter((t) => t !== null);
  return { ok, errors: all.length - ok.length };
}

/** Where the lag went: the phases of a publish workflow's history, as printed, and how each is read from its timeline. */
export const PHASES = {
  timerFiredAfterDueMs: ['timer / start delay fired (after due)', (t: PostTimeline) => t.timerFired],
  workflowTaskWaitMs: ['→ workflow task started (queue wait)', (t: PostTimeline) => t.wfTaskWait],
  workflowTaskRunMs: ['  workflow task run', (t: PostTimeline) => t.wfTaskRun],
  activityScheduledAfterDueMs: ['publishPost scheduled (after due)', (t: PostTimeline) => t.activityScheduled],
  activityQueueMs: ['→ publishPost started (last attempt)', (t: PostTimeline) => t.activityQueue],
  activityRunMs: ['  publishPost run (pool + tx + call)', (t: PostTimeline) => t.activityRun],
  closeWaitMs: ['→ workflow completed', (t: PostTimeline) => t.closeWait],
} as const;

export function breakdown(tl: PostTimeline[]) {
  const row = (f: (t: PostTimeline) => number | null) => ({
    p50: quantile(tl.map(f), 0.5),
    p99: quantile(tl.map(f), 0.99),
    max: quantile(tl.map(f), 1),
  });
  return {
    workflows: tl.length,
    notReadyAtDue: tl.filter((t) => t.timerStarted === null || t.timerStarted > 0).length,
    firstTaskStartedMs: row((t) => t.firstTaskStarted),
    ...(Object.fromEntries(Object.entries(PHASES).map(([key, [, f]]) => [key, row(f)])) as Record<
      keyof typeof PHASES,
      ReturnType<typeof row>
    >),
    activityRetried: tl.filter((t) => t.activityAttempts > 1).length,
    withStickyTimeout: tl.filter((t) => t.stickyTimeouts > 0).length,
    withStartToCloseTimeout: tl.filter((t) => t.startToCloseTimeouts > 0).length,
  };
}
