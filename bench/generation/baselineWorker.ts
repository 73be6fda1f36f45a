// The generation bench's baseline worker (baseline.ts, bench/harness/baselineWorker.ts): the
// minimal one's activity (one UPDATE of BENCH_GEN_BASELINE_TABLE), or with BENCH_GEN_SAME_STATEMENTS
// the replay of the service's activities' statements over a pool of the service worker's size.

import pg from 'pg';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { runBaselineWorker } from '../harness/baselineWorker';
import type { BareJobActivities, SameStatementsActivities } from './baselineWorkflows';
import { readPlan, rebind } from './sameStatements';

const taskQueue = process.env.BENCH_GEN_BASELINE_TASK_QUEUE;
const table = process.env.BENCH_GEN_BASELINE_TABLE;
const planFile = process.env.BENCH_GEN_SAME_STATEMENTS;
if (!taskQueue || (!table && !planFile))
  throw new Error('BENCH_GEN_BASELINE_TASK_QUEUE and BENCH_GEN_BASELINE_TABLE or BENCH_GEN_SAME_STATEMENTS must be set');

function sameStatementsActivities(file: string): SameStatementsActivities {
  const plan = readPlan(file);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.dbPoolMax });
  pool.on('error', () => undefined);
  const steps = new Map(plan.activities.map((a) => [a.type, a.statements]));
  return {
    async replayStep({ type, id }) {
      await rebind(pool, plan, steps.get(type) ?? [], id)();
    },
  };
}

const bare: BareJobActivities = {
  async completeBareJob(id) {
    await db()(table!).where({ id }).update({ completed_at: db().fn.now() });
  },
};

await runBaselineWorker({
  taskQueue,
  bundlePath: process.env.BENCH_GEN_BASELINE_BUNDLE_PATH,
  workflowsUrl: new URL('./baselineWorkflows.ts', import.meta.url),
  activities: planFile ? sameStatementsActivities(planFile) : bare,
});
