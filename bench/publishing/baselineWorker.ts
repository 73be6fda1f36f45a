// The publishing baselines' worker (bench/harness/baselineWorker.ts) on BENCH_BASELINE_TASK_QUEUE.

import { db } from '../../lib/db';
import { runBaselineWorker } from '../harness/baselineWorker';

const taskQueue = process.env.BENCH_BASELINE_TASK_QUEUE;
if (!taskQueue) throw new Error('BENCH_BASELINE_TASK_QUEUE is not set');

await runBaselineWorker({
  taskQueue,
  // The bench's pre-built bundle when it made one (--worker-bundle prebuilt).
  bundlePath: process.env.BENCH_BASELINE_BUNDLE_PATH,
  workflowsUrl: new URL('./baselineWorkflows.ts', import.meta.url),
  activities: {
    async touchBaselineRow(id: string): Promise<void> {
      await db()('bench_baseline').where({ id }).update({ done_at: db().fn.now() });
    },
  },
});
