import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import { newId } from '../../lib/ids';
import { serveUnderParent } from '../harness/serverChild';
import { bareJobWorkflow } from './baselineWorkflows';
import { bareChild } from './plan';

// The accept side of the generation bench's bare baselines (baseline.ts): Koa + pg +
// @temporalio/client and nothing of the app. `POST /jobs` drops the body, replays the accept's
// statements of the plan (plan.ts) around one start of bareJobWorkflow, and answers the job's id.

const { taskQueue, plan, pool, replay } = bareChild();
const steps = plan.activities.map(({ type, local }) => ({ type, local }));
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE || 'default' });

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST' || ctx.path !== '/jobs') return void (ctx.status = 404);
  for await (const chunk of ctx.req) void chunk;
  const id = newId('job');
  await replay(plan.acceptBefore, id);
  await client.workflow.start(bareJobWorkflow, { workflowId: id, taskQueue, args: [id, steps] });
  await replay(plan.acceptAfter, id);
  ctx.body = { data: { id } };
});

serveUnderParent(http.createServer(app.callback()), { onStop: async () => void (await Promise.all([pool.end(), connection.close()])) });
