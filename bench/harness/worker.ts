import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { spawnTsxChild, stopChild } from './proc';
import { REPO_ROOT } from './servers';
import { workerHeapArg } from '../../lib/workerHeap';

// The worker process of the job benches (workers/main.ts as a child, with the environment the
// bench set): its last output kept for an error message, a SIGTERM stop that drains (SIGKILL
// after 15 s), and readiness as the Temporal server sees it.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface WorkerChild {
  child: ChildProcess;
  tail: string[];
  stop(): Promise<void>;
}

/**
 * The worker as `npm run start:worker` starts it, heap limit included (WORKER_HEAP_MIB, read here
 * rather than through lib/config, which a bench loads only after setting its environment);
 * `nodeArgs` go to node before the entry (`--cpu-prof` for a bench's profile).
 */
export function startWorkerChild(nodeArgs: string[] = []): WorkerChild {
  const { child, tail } = spawnTsxChild(path.join(REPO_ROOT, 'workers', 'main.ts'), REPO_ROOT, process.env, [workerHeapArg(), ...nodeArgs]);
  return {
    child,
    tail,
    stop: () => stopChild(child, 15_000),
  };
}

/**
 * Whether the Temporal server has seen the worker `identity` (by default `<pid>@<hostname>`)
 * poll both halves of the task queue, workflow tasks and activity tasks.
 */
export async function pollsBothHalves(
  connection: import('@temporalio/client').Connection,
  taskQueue: string,
  identity: string,
): Promise<boolean> {
  for (const taskQueueType of [1, 2]) {
    const r = await connection.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue, kind: 1 },
      taskQueueType,
    });
    if (!(r.pollers ?? []).some((p) => p.identity === identity)) return false;
  }
  return true;
}

/** Ready once the Temporal server has seen the worker process poll both halves of the queue. */
export async function waitWorkerReady(w: WorkerChild, taskQueue: string, timeoutMs = 180_000): Promise<void> {
  const { Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const identity = `${w.child.pid}@${os.hostname()}`;
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (w.child.exitCode !== null) throw new Error(`worker exited before it was ready:\n${w.tail.join('')}`);
      if (await pollsBothHalves(connection, taskQueue, identity)) return;
      if (Date.now() > deadline) throw new Error(`worker did not poll ${taskQueue} within ${timeoutMs / 1000} s:\n${w.tail.join('')}`);
      await sleep(100);
    }
  } finally {
    await connection.close();
  }
}
