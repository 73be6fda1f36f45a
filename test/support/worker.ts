import type { NativeConnection, Worker } from '@temporalio/worker';
import type { PostWriter } from '../../lib/llm/client';
import { createWorker } from '../../workers/worker';

// One in-process Temporal worker a suite starts and stops, possibly several times (to change its
// activities, or to leave jobs QUEUED while it is down). Stopping drains the worker, then closes
// its connection, so no task of one test runs in the next.

export type TestActivities = Record<string, (...args: any[]) => Promise<unknown>>;

export interface TestWorker {
  start(activities?: TestActivities): Promise<void>;
  stop(): Promise<void>;
  readonly started: boolean;
}

/** `writer`: the post writer the generation activities use (the configured one when omitted). */
export function testWorker(opts: { writer?: PostWriter } = {}): TestWorker {
  let current: { worker: Worker; connection: NativeConnection; running: Promise<void> } | null = null;
  return {
    async start(activities) {
      if (current) throw new Error('the test worker is already running');
      const { worker, connection } = await createWorker({ activities, ...opts });
      current = { worker, connection, running: worker.run() };
    },
    async stop() {
      if (!current) return;
      const c = current;
      current = null;
      c.worker.shutdown();
      await c.running;
      await c.connection.close();
    },
    get started() {
      return current !== null;
    },
  };
}
