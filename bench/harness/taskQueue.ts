import type { Connection } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';

// A Temporal task queue as the benches watch it: its backlog, and when it has gone quiet.

const longNum = (v: unknown) => (v && typeof v === 'object' && 'toNumber' in v ? (v as { toNumber(): number }).toNumber() : Number(v ?? 0));

/** Tasks waiting in a task queue, workflow and activity halves (a worker's sticky queue not counted). */
export async function backlog(connection: Connection, taskQueue: string): Promise<number> {
  let total = 0;
  for (const taskQueueType of [1, 2]) {
    const r = await connection.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue, kind: 1 },
      taskQueueType,
      reportStats: true,
    });
    total += longNum(r.stats?.approximateBacklogCount);
  }
  return total;
}

/** When the task queue went empty, once it has stayed empty for 2 s; null if not before `deadlineMs`. */
export async function quietSince(connection: Connection, taskQueue: string, deadlineMs: number): Promise<number | null> {
  let zeroSince: number | null = null;
  while (Date.now() < deadlineMs) {
    if ((await backlog(connection, taskQueue)) === 0) {
      zeroSince ??= Date.now();
      if (Date.now() - zeroSince >= 2_000) return zeroSince;
    } else zeroSince = null;
    await sleep(250);
  }
  return null;
}

/** Until the task queue has stayed empty for 2 s; false after `timeoutMs`. */
export async function idle(connection: Connection, taskQueue: string, timeoutMs: number): Promise<boolean> {
  return (await quietSince(connection, taskQueue, Date.now() + timeoutMs)) !== null;
}
