// The baseline worker of the generation bench: a child process like the service's worker, with
// the same worker settings (workers/worker.ts workerTuning, from the same environment), running
// only bareJobWorkflow (baselineWorkflows.ts) on its own task queue.
//
//   BENCH_GEN_BASELINE_TASK_QUEUE=… node --import tsx bench/generation/baselineWorker.ts

import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { config } from '../../lib/config';
import { closeDb, db } from '../../lib/db';
import { temporalAddress } from '../../lib/temporal';
import { installRuntime, workerTuning } from '../../workers/worker';
import type { BareJobActivities } from './baselineWorkflows';

const taskQueue = process.env.BENCH_GEN_BASELINE_TASK_QUEUE;
const table = process.env.BENCH_GEN_BASELINE_TABLE;
if (!taskQueue || !table) throw new Error('BENCH_GEN_BASELINE_TASK_QUEUE and BENCH_GEN_BASELINE_TABLE must be set');

const activities: BareJobActivities = {
  async completeBareJob(id) {
    await db()(table).where({ id }).update({ completed_at: db().fn.now() });
  },
};

installRuntime();
const connection = await NativeConnection.connect({ address: temporalAddress() });
const worker = await Worker.create({
  connection,
  namespace: config.temporalNamespace,
  taskQueue,
  // The bench's pre-built bundle when it made one, as the service's worker loads
  // WORKFLOW_BUNDLE_PATH; else webpack bundles the source at start-up.
  ...(process.env.BENCH_GEN_BASELINE_BUNDLE_PATH
    ? { workflowBundle: { codePath: process.env.BENCH_GEN_BASELINE_BUNDLE_PATH } }
    : { workflowsPath: fileURLToPath(new URL('./baselineWorkflows.ts', import.meta.url)) }),
  activities,
  ...workerTuning(),
  shutdownGraceTime: '5 seconds',
});
process.once('SIGTERM', () => worker.shutdown());
process.once('SIGINT', () => worker.shutdown());
await worker.run();
await connection.close();
await closeDb();
process.exit(0);
