// The generation bench's baseline worker (baseline.ts, bench/harness/baselineWorker.ts): the
// steps of the plan in BENCH_GEN_PLAN (plan.ts) replayed over a pool of the service worker's size.

import pg from 'pg';
import { config } from '../../lib/config';
import { runBaselineWorker } from '../harness/baselineWorker';
import type { BareJobActivities } from './baselineWorkflows';
import { readPlan, rebind } from './plan';

const { BENCH_GEN_BASELINE_TASK_QUEUE: taskQueue, BENCH_GEN_PLAN: planFile } = process.env;
if (!taskQueue || !planFile) throw new Error('BENCH_GEN_BASELINE_TASK_QUEUE and BENCH_GEN_PLAN must be set');
const plan = readPlan(planFile);
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.dbPoolMax });
pool.on('error', () => undefined);
const steps = new Map(plan.activities.map((a) => [a.type, a.statements]));
const activities: BareJobActivities = {
  replayStep: async ({ type, id }) => void (await rebind(pool, plan, steps.get(type) ?? [], id)()),
};

await runBaselineWorker({
  taskQueue,
  bundlePath: process.env.BENCH_GEN_BASELINE_BUNDLE_PATH,
  workflowsUrl: new URL('./baselineWorkflows.ts', import.meta.url),
  activities,
});
