// The baseline worker of the generation bench (bench/harness/baselineWorker.ts): only
// bareJobWorkflow (baselineWorkflows.ts), on its own task queue.
//
//   BENCH_GEN_BASELINE_TASK_QUEUE=… BENCH_GEN_BASELINE_TABLE=… node --import tsx bench/generation/baselineWorker.ts

import { db } from '../../lib/db';
import { runBaselineWorker } from '../harness/baselineWorker';
import type { BareJobActivities } from './baselineWorkflows';

const taskQueue = process.env.BENCH_GEN_BASELINE_TASK_QUEUE;
const table = process.env.BENCH_GEN_BASELINE_TABLE;
if (!taskQueue || !table) throw new Error('BENCH_GEN_BASELINE_TASK_QUEUE and BENCH_GEN_BASELINE_TABLE must be set');

const activities: BareJobActivities = {
  async completeBareJob(id) {
    await db()(table).where({ id }).update({ completed_at: db().fn.now() });
  },
};

await runBaselineWorker({
  taskQueue,
  bundlePath: process.env.BENCH_GEN_BASELINE_BUNDLE_PATH,
  workflowsUrl: new URL('./baselineWorkflows.ts', import.meta.url),
  activities,
});
