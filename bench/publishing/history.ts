import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import pLimit from 'p-limit';
import { mapValues, quantile } from '../harness/format';

// Where a post's lag was spent, read from its publish workflow's history (bench/publishing/README.md
// "Figures", "where the lag went"). Every figure is in milliseconds after the post's due time
// (negative: before it), or between two events; null where the history has no such event.

export type PostTimeline = Awaited<ReturnType<typeof timeline>>;

// temporal.api.enums.v1.TimeoutType
const START_TO_CLOSE = 1;
const SCHEDULE_TO_START = 2;
const nil = null as number | null;

export async function timeline(client: Client, workflowId: string, postId: string, dueMs: number) {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const out = {
    postId,
    // The first workflow task, and the timer set: null when none was needed (the schedule loaded after due).
    ...{ firstTaskStarted: nil, timerStarted: nil, timerFired: nil },
    /** Timer fired → the workflow task reacting to it started (queue wait, sticky-queue timeout included); that task's run. */
    ...{ wfTaskWait: nil, wfTaskRun: nil },
    /** Workflow tasks after the timer not picked up from a sticky queue in time (schedule-to-start), or held by a dead worker (start-to-close). */
    ...{ stickyTimeouts: 0, startToCloseTimeouts: 0 },
    /** publishPost scheduled (after due); scheduled → started (last attempt: retries' waits included); started → completed. */
    ...{ activityScheduled: nil, activityQueue: nil, activityRun: nil, activityAttempts: 0 },
    /** publishPost completed → workflow completed (the last workflow task). */
    closeWait: nil,
    /** Events in the workflow's history: what the capacity model counts per post (docs/publishing.md). */
    historyEvents: events.length,
  };
  const rel = (ms: number | null) => (ms === null ? null : ms - dueMs);
  let [firedAt, wfStarted, scheduledAt, startedAt, doneAt] = [nil, nil, nil, nil, nil];
  let publishId: string | null = null;
  // A workflow started with a start delay to its fire time (lib/temporal/start/publishPost.ts) has no
  // timer: its start counts as the timer set and its first workflow task scheduled as the timer
  // fired; a timer armed later (after a signal ended the delay early) takes their place.
  let delayed = false;
  const ofPublish = (id: unknown) => publishId !== null && String(id) === publishId;
  for (const e of events) {
    const at = optionalTsToMs(e.eventTime) ?? null;
    if ((optionalTsToMs(e.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff) ?? 0) > 0) {
      delayed = true;
      out.timerStarted = rel(at);
    }
    if (delayed && e.workflowTaskScheduledEventAttributes && firedAt === null) {
      out.timerFired = rel((firedAt = at));
      continue;
    }
    if (e.workflowTaskStartedEventAttributes && out.firstTaskStarted === null) out.firstTaskStarted = rel(at);
    if (e.timerStartedEventAttributes) out.timerStarted = rel(at);
    if (e.timerFiredEventAttributes) {
      out.timerFired = rel((firedAt = at));
      wfStarted = out.wfTaskWait = out.wfTaskRun = null;
      continue;
    }
    if (firedAt !== null && at !== null) {
      const timeout = e.workflowTaskTimedOutEventAttributes?.timeoutType;
      if (timeout === SCHEDULE_TO_START) out.stickyTimeouts++;
      else if (timeout === START_TO_CLOSE) out.startToCloseTimeouts++;
      if (e.workflowTaskStartedEventAttributes && wfStarted === null) out.wfTaskWait = (wfStarted = at) - firedAt;
      if (e.workflowTaskCompletedEventAttributes && wfStarted !== null && out.wfTaskRun === null) out.wfTaskRun = at - wfStarted;
    }
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'publishPost') {
      publishId = String(e.eventId);
      out.activityScheduled = rel((scheduledAt = at));
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started && ofPublish(started.scheduledEventId)) {
      startedAt = at;
      out.activityAttempts = started.attempt ?? 1;
      if (scheduledAt !== null && at !== null) out.activityQueue = at - scheduledAt;
    }
    if (ofPublish(e.activityTaskCompletedEventAttributes?.scheduledEventId) && startedAt !== null && at !== null)
      out.activityRun = (doneAt = at) - startedAt;
    if (e.workflowExecutionCompletedEventAttributes && doneAt !== null && at !== null) out.closeWait = at - doneAt;
  }
  return out;
}

/** A compact history for a report: event name, milliseconds after the due time, attempt. */
export async function compactHistory(client: Client, workflowId: string, dueMs: number) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).map((e) => {
    const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]) ?? 'unknown';
    const attrs = (e as Record<string, any>)[key] ?? {};
    const at = optionalTsToMs(e.eventTime);
    const detail: string | undefined = attrs.activityType?.name || attrs.signalName || attrs.identity;
    return {
      id: Number(e.eventId),
      event: key.replace(/EventAttributes$/, ''),
      atMs: at === undefined ? null : Math.round(at - dueMs),
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
  const row = (f: (t: PostTimeline) => number | null) => {
    const v = tl.map(f);
    return { p50: quantile(v, 0.5), p99: quantile(v, 0.99), max: quantile(v, 1) };
  };
  const phases = mapValues(PHASES, ([, f]) => row(f));
  return {
    workflows: tl.length,
    notReadyAtDue: tl.filter((t) => t.timerStarted === null || t.timerStarted > 0).length,
    firstTaskStartedMs: row((t) => t.firstTaskStarted),
    ...(phases as Record<keyof typeof PHASES, ReturnType<typeof row>>),
    withStickyTimeout: tl.filter((t) => t.stickyTimeouts > 0).length,
    withStartToCloseTimeout: tl.filter((t) => t.startToCloseTimeouts > 0).length,
  };
}
