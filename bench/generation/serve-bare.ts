import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import pg from 'pg';
import { serveUnderParent } from '../harness/serverChild';
import { bareJobWorkflow } from './baselineWorkflows';

// The accept side of the generation bench's bare baseline: the least an API can do to queue a
// job durably. `POST /jobs` inserts one row (id, created_at = now()) and starts one workflow
// (bareJobWorkflow, workflow id = row id) on the baseline's task queue, then answers 200 with
// the id. No auth, no rate limit, no router, no validation, no reservation, no body parsing
// (the body is read and dropped). Koa + pg + @temporalio/client, nothing of the app.

const table = process.env.BENCH_GEN_BASELINE_TABLE;
const taskQueue = process.env.BENCH_GEN_BASELINE_TASK_QUEUE;
if (!table || !taskQueue) throw new Error('BENCH_GEN_BASELINE_TABLE and BENCH_GEN_BASELINE_TASK_QUEUE must be set');
const insertSql = `insert into "${table.replace(/"/g, '""')}" (id) values ($1)`;

// The API's pool size (lib/db, DB_POOL_MAX), so neither side gets more database sessions.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX || 20) });
pool.on('error', () => undefined);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE || 'default' });

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST' || ctx.path !== '/jobs') {
    ctx.status = 404;
    return;
  }
  for await (const chunk of ctx.req) void chunk;
  const id = randomUUID();
  await pool.query(insertSql, [id]);
  await client.workflow.start(bareJobWorkflow, { workflowId: id, taskQueue, args: [id] });
  ctx.body = { data: { id } };
});

serveUnderParent(http.createServer(app.callback()), {
  onStop: async () => {
    await pool.end();
    await connection.close();
  },
});
