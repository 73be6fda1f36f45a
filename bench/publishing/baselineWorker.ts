// The baseline worker of the publishing bench: a child process like the service's worker, with
// the same worker settings (workers/worker.ts workerTuning, from the same environment), running
// only the baseline workflows of baselineWorkflows.ts on their own task queue.
//
//   BENCH_BASELINE_TASK_QUEUE=… node --import tsx bench/publishing/baselineWorker.ts

import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { config } from '../../lib/config';
import { closeDb, db } from '../../lib/db';
import { temporalAddress } from '../../lib/temporal';
import { installRuntime, workerTuning } from '../../workers/worker';

const taskQueue = process.env.BENCH_BASELINE_TASK_QUEUE;
if (!taskQueue) throw new Error('BENCH_BASELINE_TASK_QUEUE is not set');

installRuntime();
const connection = await NativeConnection.connect({ address: temporalAddress() });
const worker = await Worker.create({
  connection,
  namespace: config.temporalNamespace,
  taskQueue,
  // The bench's pre-built bundle when it made one (--worker-bundle prebuilt), as the service's
  // worker loads WORKFLOW_BUNDLE_PATH; else webpack bundles the source at start-up.
  ...(process.env.BENCH_BASELINE_BUNDLE_PATH
    ? { workflowBundle: { codePath: process.env.BENCH_BASELINE_BUNDLE_PATH } }
    : { workflowsPath: fileURLToPath(new URL('./baselineWorkflows.ts', import.meta.url)) }),
  activities: {
    async touchBaselineRow(id: string): Promise<void> {
      await db()('bench_baseline').where({ id }).update({ done_at: db().fn.now() });
    },
  },
  ...workerTuning(),
  shutdownGraceTime: '5 seconds',
});
process.once('SIGTERM', () => worker.shutdown());
process.once('SIGINT', () => worker.shutdown());
await worker.run();
await connection.close();
await closeDb();
process.exit(0);
