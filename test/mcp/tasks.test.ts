import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  TaskStatusNotificationSchema,
  type CallToolResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { grantedTtl, TASK_POLL_INTERVAL_MS, TASK_TTL_MAX_MS, TASK_TTL_MIN_MS } from '../../api/mcp/tasks';
import { TOOLS } from '../../api/mcp/tools/index';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { issueApiKey } from '../../admin/provision';
import { startLlmStub, type LlmStub } from '../../sim/llm/server';
import { workspaceWithKey } from '../support/factories';
import { startApiProcess, type ApiProcess } from '../support/foundation';
import { freePort } from '../../tooling/ports';
import { launchService, type ServiceProcess } from '../support/processes';
import { waitFor } from '../support/wait';
import { llmStubWriter, testWorker } from '../support/worker';
import { connect, GENERATION_SOURCE, ok, rerouting, startMcpStack, type McpStack } from '../support/mcp';

// MCP 2025-11-25 tasks over the service's jobs (docs/mcp.md "Tasks"), through the SDK client's
// task API over streamable HTTP: the task is the job, bound to the credential that made it,
// read, awaited and cancelled through whichever API process a request reaches.

const JOB_TOOLS = ['generate_post', 'generate_image', 'create_source_file', 'add_to_knowledge_base'];

/** Starts a task-augmented call through the SDK client's task API and answers the created task. */
async function startTask(client: Client, name: string, args: Record<string, unknown>, ttl?: number): Promise<Task> {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: ttl === undefined ? {} : { ttl },
  });
  for await (const message of stream) {
    if (message.type === 'taskCreated') {
      // The client would go on polling; this test polls elsewhere.
      await stream.return();
      return message.task;
    }
    if (message.type === 'error') throw message.error;
    throw new Error(`expected the task first, got ${message.type}`);
  }
  throw new Error('no task');
}

async function mcpError(p: Promise<unknown>): Promise<McpError> {
  const outcome = await p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  assert.ok('error' in outcome, `expected a JSON-RPC error, got ${JSON.stringify((outcome as { value: unknown }).value)}`);
  assert.ok(outcome.error instanceof McpError, String(outcome.error));
  return outcome.error;
}

const generation = (projectId: string) => ({ projectId, source: GENERATION_SOURCE });

describe('MCP tasks (jobs as tasks)', function () {
  this.timeout(180_000);
  let stack: McpStack;
  let stub: LlmStub;
  let worker: ReturnType<typeof testWorker>;
  let second: ApiProcess;
  const clients: Client[] = [];

  async function client(mcpUrl: string, key: string, opts: Parameters<typeof connect>[3] = {}): Promise<Client> {
    const c = await connect('streamable', mcpUrl, key, opts);
    clients.push(c);
    return c;
  }

  before(async () => {
    stack = await startMcpStack();
    stub = await startLlmStub();
    worker = testWorker({ writer: llmStubWriter(stub, 30_000) });
    await worker.start();
    second = await startApiProcess();
  });
  beforeEach(() => stub.reset());
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  });
  after(async () => {
    await second?.close();
    await worker?.stop();
    await stub?.close();
    await stack?.close();
  });

  it('negotiates 2025-11-25, declares tasks, and lists every job-queuing tool with task support optional', async () => {
    const ws = await workspaceWithKey();
    const c = await client(stack.mcpUrl, ws.key);
    assert.equal((c.transport as StreamableHTTPClientTransport).protocolVersion, '2025-11-25');
    assert.deepEqual(c.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await c.listTools();
    for (const t of tools) {
      if (JOB_TOOLS.includes(t.name)) assert.deepEqual(t.execution, { taskSupport: 'optional' }, t.name);
      else assert.equal(t.execution, undefined, t.name);
    }
    assert.deepEqual(
      TOOLS.filter((t) => t.taskSupport)
        .map((t) => t.name)
        .sort(),
      [...JOB_TOOLS].sort(),
    );

    // Older revisions still negotiate (their clients simply never ask for tasks).
    const raw = await fetch(`${stack.mcpUrl}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ws.key}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      }),
    });
    assert.match(await raw.text(), /"protocolVersion":"2025-06-18"/);
  });

  it('a task created through one API process is polled, awaited and its result fetched through another', async () => {
    // A writer slow enough for the task to be answered, and polled elsewhere, while it works.
    stub.setLatency(5_000);
    const ws = await workspaceWithKey();
    const first = await client(stack.mcpUrl, ws.key);
    const other = await client(second.mcpUrl, ws.key);

    const task = await startTask(first, 'generate_post', generation(ws.project.id), 60_000);
    assert.match(task.taskId, /^job_/);
    assert.equal(task.status, 'working');
    assert.equal(task.pollInterval, TASK_POLL_INTERVAL_MS);
    assert.equal(task.ttl, TASK_TTL_MIN_MS, 'a ttl shorter than the floor is raised to it');
    // The task id is the job id: the job tools see it.
    assert.equal((await ok(first, 'get_job', { jobId: task.taskId })).data.type, 'POST_GENERATION');

    const polled = await other.experimental.tasks.getTask(task.taskId);
    assert.equal(polled.taskId, task.taskId);
    assert.equal(polled.status, 'working');
    assert.equal(polled.createdAt, task.createdAt);
    assert.ok(polled.statusMessage, 'a working task says what its job is doing');

    // tasks/result blocks until the job is final, then answers what the plain call answers.
    const result = (await other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
    assert.notEqual(result.isError, true);
    const job = (result.structuredContent as any).data;
    assert.equal(job.id, task.taskId);
    assert.equal(job.status, 'DONE');
    assert.match(job.result.postId, /^post_/);
    assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), result.structuredContent);
    assert.deepEqual(result._meta?.['io.modelcontextprotocol/related-task'], { taskId: task.taskId });
    assert.match(String(result._meta?.requestId), /^req_/);
    assert.equal((await ok(other, 'get_post', { postId: job.result.postId })).data.status, 'draft');

    const done = await first.experimental.tasks.getTask(task.taskId);
    assert.equal(done.status, 'completed');
    assert.ok(Date.parse(done.lastUpdatedAt) >= Date.parse(done.createdAt));
    const listed = await other.experimental.tasks.listTasks();
    assert.deepEqual(
      listed.tasks.map((t) => [t.taskId, t.status]),
      [[task.taskId, 'completed']],
    );
    // Cancelling a finished task is the tasks spec's -32602.
    const refused = await mcpError(other.experimental.tasks.cancelTask(task.taskId));
    assert.equal(refused.code, ErrorCode.InvalidParams);
  });

  it('a plain call of a task tool behaves as before: the queued job at once, or followed with progress', async () => {
    const ws = await workspaceWithKey();
    const c = await client(stack.mcpUrl, ws.key);
    const plain = await ok(c, 'generate_post', generation(ws.project.id));
    assert.equal(plain.data.status, 'QUEUED');
    const followed = await c.callTool({ name: 'generate_post', arguments: generation(ws.project.id) }, CallToolResultSchema, {
      onprogress: () => {},
      resetTimeoutOnProgress: true,
    });
    assert.equal((followed.structuredContent as any).data.status, 'DONE');
    // Neither made a task.
    assert.deepEqual((await c.experimental.tasks.listTasks()).tasks, []);
  });

  it('the ingest tools run as tasks to their end too: a file source and a knowledge document', async () => {
    const ws = await workspaceWithKey();
    const c = await client(stack.mcpUrl, ws.key);
    const text = 'Tasks let an agent hand over long work and come back for it. Narwhals keep their tusks.';
    const file = await startTask(c, 'create_source_file', {
      projectId: ws.project.id,
      type: 'file',
      content_base64: Buffer.from(text).toString('base64'),
      mimeType: 'text/plain',
      filename: 'tasks.txt',
    });
    const knowledge = await startTask(c, 'add_to_knowledge_base', { projectId: ws.project.id, type: 'text', text });
    const sourceJob = ((await c.experimental.tasks.getTaskResult(file.taskId, CallToolResultSchema)).structuredContent as any).data;
    assert.equal(sourceJob.type, 'SOURCE_INGEST');
    assert.equal(sourceJob.status, 'DONE');
    assert.equal((await ok(c, 'get_source', { sourceId: sourceJob.result.sourceId })).data.status, 'Success');
    const knowledgeJob = ((await c.experimental.tasks.getTaskResult(knowledge.taskId, CallToolResultSchema)).structuredContent as any).data;
    assert.equal(knowledgeJob.type, 'KNOWLEDGE_INGEST');
    assert.equal(knowledgeJob.status, 'DONE');
    assert.match(knowledgeJob.result.documentId, /^kb_/);
    assert.deepEqual(
      (await c.experimental.tasks.listTasks()).tasks.map((t) => [t.taskId, t.status]),
      [
        [knowledge.taskId, 'completed'],
        [file.taskId, 'completed'],
      ],
    );
  });

  it('a failed job is a failed task whose result is the failed job, as the following call answers it', async () => {
    const ws = await workspaceWithKey();
    const c = await client(stack.mcpUrl, ws.key);
    stub.failNext(1, 'auth');
    const task = await startTask(c, 'generate_post', generation(ws.project.id));
    const result = (await c.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
    assert.notEqual(result.isError, true);
    const job = (result.structuredContent as any).data;
    assert.equal(job.status, 'FAILED');
    assert.equal(job.errorCode, 'llm_auth_failed');
    const failed = await c.experimental.tasks.getTask(task.taskId);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.statusMessage, job.errorMessage);
  });

  it('an idempotent replay of a task call is the same task', async () => {
    const ws = await workspaceWithKey();
    const c = await client(stack.mcpUrl, ws.key);
    const args = { ...generation(ws.project.id), idempotencyKey: 'task-replay-1' };
    const a = await startTask(c, 'generate_post', args);
    const b = await startTask(c, 'generate_post', args);
    assert.equal(b.taskId, a.taskId);
    assert.equal(b.createdAt, a.createdAt);
    assert.equal(a.ttl, 24 * 3600_000, 'no ttl asked: the default');
    assert.equal((await c.experimental.tasks.listTasks()).tasks.length, 1);
  });

  it('a queued job cancels through tasks/cancel (spec 3.2), from another process; a running one answers -32602', async () => {
    const ws = await workspaceWithKey();
    const first = await client(stack.mcpUrl, ws.key);
    const other = await client(second.mcpUrl, ws.key);

    // No worker: the job stays QUEUED.
    await worker.stop();
    let queued: Task;
    try {
      queued = await startTask(first, 'generate_post', generation(ws.project.id));
      assert.equal((await ok(first, 'get_job', { jobId: queued.taskId })).data.status, 'QUEUED');
      const cancelled = await other.experimental.tasks.cancelTask(queued.taskId);
      assert.equal(cancelled.taskId, queued.taskId);
      assert.equal(cancelled.status, 'cancelled');
    } finally {
      await worker.start();
    }
    assert.equal((await ok(first, 'get_job', { jobId: queued.taskId })).data.status, 'CANCELLED');
    assert.equal((await first.experimental.tasks.getTask(queued.taskId)).status, 'cancelled');
    const result = (await first.experimental.tasks.getTaskResult(queued.taskId, CallToolResultSchema)) as CallToolResult;
    assert.equal((result.structuredContent as any).data.status, 'CANCELLED');
    // Cancelled is terminal: a second cancel is refused as the tasks spec says.
    assert.equal((await mcpError(other.experimental.tasks.cancelTask(queued.taskId))).code, ErrorCode.InvalidParams);

    // A running job is not cancelled (spec 3.2): -32602, and it runs on to the end.
    stub.setLatency(8_000);
    const running = await startTask(first, 'generate_post', generation(ws.project.id));
    await waitFor(async () => (await ok(first, 'get_job', { jobId: running.taskId })).data.status === 'RUNNING', 20_000, 'the job to run');
    const refused = await mcpError(other.experimental.tasks.cancelTask(running.taskId));
    assert.equal(refused.code, ErrorCode.InvalidParams);
    assert.match(refused.message, /RUNNING/);
    assert.equal((refused.data as any).code, 'conflict');
    assert.equal((await other.experimental.tasks.getTask(running.taskId)).status, 'working');
    const finished = (await other.experimental.tasks.getTaskResult(running.taskId, CallToolResultSchema)) as CallToolResult;
    assert.equal((finished.structuredContent as any).data.status, 'DONE');
  });

  it("another workspace's task, or another credential's, answers like a task that never existed", async () => {
    const mine = await workspaceWithKey();
    const theirs = await workspaceWithKey();
    const owner = await client(stack.mcpUrl, mine.key);
    await worker.stop();
    let task: Task;
    try {
      task = await startTask(owner, 'generate_post', generation(mine.project.id));
    } finally {
      await worker.start();
    }
    const sameWorkspaceOtherKey = (await issueApiKey({ workspaceId: mine.workspace.id, scopes: ['read', 'write'] })).key;
    for (const [who, key] of [
      ['another workspace', theirs.key],
      ['another credential of the workspace', sameWorkspaceOtherKey],
    ] as const) {
      const stranger = await client(second.mcpUrl, key);
      for (const id of [task.taskId, 'job_doesnotexist000000000000']) {
        const calls = [
          () => stranger.experimental.tasks.getTask(id),
          () => stranger.experimental.tasks.getTaskResult(id, CallToolResultSchema),
          () => stranger.experimental.tasks.cancelTask(id),
        ];
        for (const call of calls) {
          const err = await mcpError(call());
          assert.equal(err.code, ErrorCode.InvalidParams, who);
          assert.match(err.message, /not found/i, who);
        }
      }
      assert.deepEqual((await stranger.experimental.tasks.listTasks()).tasks, [], who);
    }
    // Nothing was cancelled on the owner's behalf.
    assert.notEqual((await owner.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
    assert.notEqual((await ok(owner, 'get_job', { jobId: task.taskId })).data.status, 'CANCELLED');
  });

  it('tasks/list pages with signed cursors, newest first; a forged cursor is -32602', async () => {
    const ws = await workspaceWithKey();
    const c = await client(stack.mcpUrl, ws.key);
    await worker.stop();
    const made: string[] = [];
    try {
      for (let i = 0; i < 3; i++) made.push((await startTask(c, 'generate_post', generation(ws.project.id))).taskId);
    } finally {
      await worker.start();
    }
    const pageSize = config.generation.jobListDefault;
    config.generation.jobListDefault = 2;
    try {
      const one = await c.experimental.tasks.listTasks();
      assert.equal(one.tasks.length, 2);
      assert.ok(one.nextCursor);
      const two = await c.experimental.tasks.listTasks(one.nextCursor);
      assert.equal(two.nextCursor, undefined);
      assert.deepEqual(
        [...one.tasks, ...two.tasks].map((t) => t.taskId),
        [...made].reverse(),
      );
      assert.equal((await mcpError(c.experimental.tasks.listTasks(`${one.nextCursor}x`))).code, ErrorCode.InvalidParams);
    } finally {
      config.generation.jobListDefault = pageSize;
    }
  });

  it('a tool without task support answers -32601; a call refused before a job exists is a JSON-RPC error with the tool error fields', async () => {
    const ws = await workspaceWithKey();
    const c = await client(stack.mcpUrl, ws.key);
    const notATask = await mcpError(
      c.experimental.tasks
        .callToolStream({ name: 'get_workspace', arguments: {} }, CallToolResultSchema, { task: {} })
        .next()
        .then((m) => {
          if (m.value && m.value.type === 'error') throw m.value.error;
          return m.value;
        }),
    );
    assert.equal(notATask.code, ErrorCode.MethodNotFound);
    // The same refusal as the plain call's, with the same fields.
    const bad = { projectId: ws.project.id, source: { type: 'text' } };
    const plain = (await c.callTool({ name: 'generate_post', arguments: bad })).structuredContent as any;
    const refused = await mcpError(startTask(c, 'generate_post', bad));
    assert.equal(refused.code, ErrorCode.InvalidParams);
    assert.equal((refused.data as any).code, plain.code);
    assert.equal((refused.data as any).message, plain.message);
    assert.deepEqual((refused.data as any).details, plain.details);
    assert.match((refused.data as any).requestId, /^req_/);
    const text = await mcpError(startTask(c, 'create_source_file', { projectId: ws.project.id, type: 'text', text: 'Hello' }));
    assert.equal(text.code, ErrorCode.InvalidParams);
    assert.deepEqual((await c.experimental.tasks.listTasks()).tasks, []);
  });

  it('tasks/get and tasks/list count against the workspace read budget (spec 8); tasks/result does not', async () => {
    const ws = await workspaceWithKey();
    const c = await client(stack.mcpUrl, ws.key);
    const task = await startTask(c, 'generate_post', generation(ws.project.id));
    await c.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    const previous = config.rateLimit.readPerWindow;
    config.rateLimit.readPerWindow = 2;
    try {
      // The window may hold reads of this workspace already; spend what is left.
      for (let i = 0; i < 2; i++) await c.experimental.tasks.getTask(task.taskId).catch(() => undefined);
      const limited = await mcpError(c.experimental.tasks.getTask(task.taskId));
      assert.equal(limited.code, ErrorCode.InvalidParams);
      assert.equal((limited.data as any).code, 'rate_limited');
      assert.ok((limited.data as any).details.retryAfterSeconds >= 1);
      assert.equal((await mcpError(c.experimental.tasks.listTasks())).code, ErrorCode.InvalidParams);
      const result = (await c.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
      assert.equal((result.structuredContent as any).data.status, 'DONE');
    } finally {
      config.rateLimit.readPerWindow = previous;
    }
  });

  it('grants a ttl between the floor and the ceiling', () => {
    assert.equal(grantedTtl(undefined), 24 * 3600_000);
    assert.equal(grantedTtl(null), 24 * 3600_000);
    assert.equal(grantedTtl(1_000), TASK_TTL_MIN_MS);
    assert.equal(grantedTtl(30 * 24 * 3600_000), TASK_TTL_MAX_MS);
    assert.equal(grantedTtl(2 * 3600_000), 2 * 3600_000);
  });

  it('an expired task is gone for its credential, its job stays', async () => {
    const ws = await workspaceWithKey();
    const c = await client(stack.mcpUrl, ws.key);
    await worker.stop();
    let task: Task;
    try {
      task = await startTask(c, 'generate_post', generation(ws.project.id));
    } finally {
      await worker.start();
    }
    await db()('mcp_tasks')
      .where({ id: task.taskId })
      .update({ expires_at: new Date(Date.now() - 1000) });
    assert.equal((await mcpError(c.experimental.tasks.getTask(task.taskId))).code, ErrorCode.InvalidParams);
    assert.deepEqual((await c.experimental.tasks.listTasks()).tasks, []);
    assert.equal((await ok(c, 'get_job', { jobId: task.taskId })).data.id, task.taskId);
  });

  it('a client that declares tasks hears notifications/tasks/status on its stream, for a task created through another process', async () => {
    stub.setLatency(1_500);
    const ws = await workspaceWithKey();
    // The standalone stream (GET) is held by this process; every POST goes to the other one.
    const postsElsewhere = rerouting(
      stack.mcpUrl,
      second.mcpUrl,
      (url, init) => init?.method === 'POST' && !String(init.body).includes('"initialize"'),
    );
    const c = new Client({ name: 'task-host', version: '1.0.0' }, { capabilities: { tasks: { list: {}, cancel: {} } } });
    clients.push(c);
    const heard: Task[] = [];
    c.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      heard.push(n.params as Task);
    });
    await c.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', stack.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${ws.key}` } },
        fetch: postsElsewhere,
      }),
    );
    await c.listTools();
    // The standalone stream opens right after initialization.
    await new Promise((r) => setTimeout(r, 500));
    const task = await startTask(c, 'generate_post', generation(ws.project.id));
    const completed = await waitFor(
      async () => heard.find((t) => t.taskId === task.taskId && t.status === 'completed'),
      30_000,
      'the completed notification',
    );
    assert.equal(completed.ttl, task.ttl);
    assert.equal(completed.createdAt, task.createdAt);
    assert.ok(!heard.some((t) => t.status === 'working'), 'the creation is not announced again');
  });

  describe('across an API restart', () => {
    let api: ServiceProcess | undefined;
    after(async () => {
      await api?.stop();
    });

    it('a task running while its API process is killed and restarted is awaited and fetched afterwards', async () => {
      const port = await freePort();
      let mcpPort = await freePort();
      while (mcpPort === port) mcpPort = await freePort();
      const mcpUrl = `http://127.0.0.1:${mcpPort}`;
      const env = { PORT: String(port), MCP_PORT: String(mcpPort), PUBLIC_URL: `http://127.0.0.1:${port}`, MCP_PUBLIC_URL: mcpUrl };
      // The API as a process of its own (test/support/processes.ts), restarted on the same ports.
      const start = () => launchService({ kind: 'api', env, ready: { line: /mcp listening/ }, readyTimeoutMs: 120_000 });
      api = await start();
      stub.setLatency(6_000);
      const ws = await workspaceWithKey();
      const c = await client(mcpUrl, ws.key);
      const task = await startTask(c, 'generate_post', generation(ws.project.id));
      assert.equal((await c.experimental.tasks.getTask(task.taskId)).status, 'working');
      await waitFor(
        async () => (await db()('jobs').where({ id: task.taskId }).first('status'))?.status === 'RUNNING',
        20_000,
        'the job to run',
      );

      await api.kill('SIGKILL');
      api = await start();

      // The same client and session (its record is in Redis) carry on against the new process.
      const result = (await c.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
      assert.equal((result.structuredContent as any).data.status, 'DONE');
      assert.equal((await c.experimental.tasks.getTask(task.taskId)).status, 'completed');
      assert.deepEqual(
        (await c.experimental.tasks.listTasks()).tasks.map((t) => t.taskId),
        [task.taskId],
      );
    });
  });
});
