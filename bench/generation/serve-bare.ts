import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import pg from 'pg';
import { newId } from '../../lib/ids';
import { serveUnderParent } from '../harness/serverChild';
import { bareJobWorkflow } from './baselineWorkflows';
import { readPlan, rebind } from './plan';

// The accept side of the generation bench's bare baselines (baseline.ts): Koa + pg +
// @temporalio/client and nothing of the app. `POST /jobs` drops the body, replays the accept's
// statements of the plan in BENCH_GEN_PLAN (plan.ts) around one start of bareJobWorkflow, and
// answers the job's id.

const { BENCH_GEN_BASELINE_TASK_QUEUE: taskQueue, BENCH_GEN_PLAN: planFile } = process.env;
if (!taskQueue || !planFile) throw new Error('BENCH_GEN_BASELINE_TASK_QUEUE and BENCH_GEN_PLAN must be set');
const plan = readPlan(planFile);
const steps = plan.activities.map(({ type, local }) => ({ type, local }));

// The API's pool size (lib/db, DB_POOL_MAX), so neither side gets more database sessions.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX || 20) });
pool.on('error', () => undefined);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE || 'default' });

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST' || ctx.path !== '/jobs') return void (ctx.status = 404);
  for await (const chunk of ctx.req) void chunk;
  const id = newId('job');
  await rebind(pool, plan, plan.acceptBefore, id)();
  await client.workflow.start(bareJobWorkflow, { workflowId: id, taskQueue, args: [id, steps] });
  await rebind(pool, plan, plan.acceptAfter, id)();
  ctx.body = { data: { id } };
});

serveUnderParent(http.createServer(app.callback()), {
  onStop: async () => {
    await pool.end();
    await connection.close();
  },
});
