import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import pg from 'pg';
import { newId } from '../../lib/ids';
import { serveUnderParent } from '../harness/serverChild';
import { bareJobWorkflow, sameStatementsJobWorkflow } from './baselineWorkflows';
import { readPlan, rebind } from './sameStatements';

// The accept side of the generation bench's baselines (baseline.ts): Koa + pg + @temporalio/client
// and nothing of the app; `POST /jobs` drops the body and answers the job's id once its workflow
// has started. Minimal (BENCH_GEN_BASELINE_TABLE): one row inserted, bareJobWorkflow started.
// Same statements (BENCH_GEN_SAME_STATEMENTS): the API's captured statements around one start.

const table = process.env.BENCH_GEN_BASELINE_TABLE;
const taskQueue = process.env.BENCH_GEN_BASELINE_TASK_QUEUE;
const planFile = process.env.BENCH_GEN_SAME_STATEMENTS;
if ((!table && !planFile) || !taskQueue)
  throw new Error('BENCH_GEN_BASELINE_TASK_QUEUE and BENCH_GEN_BASELINE_TABLE or BENCH_GEN_SAME_STATEMENTS must be set');

// The API's pool size (lib/db, DB_POOL_MAX), so neither side gets more database sessions.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX || 20) });
pool.on('error', () => undefined);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE || 'default' });

const accept: () => Promise<string> = planFile ? sameStatementsAccept(planFile) : minimalAccept(table!);

function minimalAccept(name: string) {
  const insertSql = `insert into "${name.replace(/"/g, '""')}" (id) values ($1)`;
  return async () => {
    const id = randomUUID();
    await pool.query(insertSql, [id]);
    await client.workflow.start(bareJobWorkflow, { workflowId: id, taskQueue: taskQueue!, args: [id] });
    return id;
  };
}

function sameStatementsAccept(file: string) {
  const plan = readPlan(file);
  const steps = plan.activities.map((a) => ({ type: a.type, local: a.local }));
  return async () => {
    const id = newId('job');
    await rebind(pool, plan, plan.acceptBefore, id)();
    await client.workflow.start(sameStatementsJobWorkflow, { workflowId: id, taskQueue: taskQueue!, args: [id, steps] });
    await rebind(pool, plan, plan.acceptAfter, id)();
    return id;
  };
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST' || ctx.path !== '/jobs') {
    ctx.status = 404;
    return;
  }
  for await (const chunk of ctx.req) void chunk;
  ctx.body = { data: { id: await accept() } };
});

serveUnderParent(http.createServer(app.callback()), {
  onStop: async () => {
    await pool.end();
    await connection.close();
  },
});
