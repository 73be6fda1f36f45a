import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks';
import {
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type CallToolResult,
  type CreateTaskResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import type { ApiDeps } from '../deps';
import { requestAuthOf } from './auth';
import { readUntilJobEnds } from '../../lib/jobs/ended';
import type { Job } from '../../lib/presenters/jobs';
import { limitWorkspace } from '../pipeline/index';
import { asApiError, toolError } from './errors';
import { progressReporter } from './progress';
import { JobTaskStore, TASK_POLL_INTERVAL_MS, TASK_RESULT_RECHECK_MS, taskRefusal, type TaskCreation } from './tasks';
import type { SessionHandle, ToolCallContext, ToolDefinition } from './tool';
import { findTool, TOOLS } from './tools/index';

// One MCP Server per session, whatever the transport. The low-level Server is used rather than
// McpServer because McpServer validates arguments itself and answers a failure as a generic
// error: here the operation's own schema validates, so that a tool answers the same error code
// as its REST twin (spec 4.9).

const SERVER_INFO = { name: 'content-scheduler', title: 'Content Scheduling Service', version: '1.0.0' };

const INSTRUCTIONS = [
  'Tools read and write the active workspace of this session (get_workspace shows it; switch_workspace moves it).',
  'Tools that take projectId default to the project pinned when access was granted; with an API key, pass it.',
  'A failed tool answers isError with structured content { code, message, requestId, documentationUrl }: branch on code.',
  'delete_post is two-phase: call it without confirmationToken, confirm with the user, then call it again with the token.',
  'generate_post is asynchronous: pass a progressToken to follow the job to the end, or poll get_job.',
  'Tools that queue a job (generate_post, generate_image, create_source_file, add_to_knowledge_base) also run as MCP tasks: the task id is the job id.',
].join('\n');

const LISTED_TOOLS = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: t.inputSchema,
  outputSchema: t.outputSchema,
  annotations: t.annotations,
  // MCP 2025-11-25 tasks, tool-level negotiation: absent means forbidden.
  ...(t.taskSupport ? { execution: { taskSupport: t.taskSupport } } : {}),
}));

// One validator for every session: the SDK would otherwise compile a new Ajv per Server.
const validator = new AjvJsonSchemaValidator();

/** One task store for every session: tasks are jobs, bound to credentials (tasks.ts). */
const taskStore = new JobTaskStore((body, requestId) => toolResult(body, requestId));

/**
 * tools/call as the handler is registered. The SDK's Server validates tools/call params itself
 * and answers a malformed request (arguments not an object, name not a string) with JSON-RPC
 * -32602 Invalid params; but its Protocol first parses the request with the schema it was
 * registered under, and a failure there escapes as -32603 Internal error, a server fault for a
 * client's mistake. Registered under this method-only schema, the Server's own check is the one
 * that answers.
 */
const ToolsCallMethod = z.object({ method: z.literal('tools/call') }).passthrough();

export function createToolServer(session: SessionHandle, deps?: ApiDeps): Server {
  const server = new Server(SERVER_INFO, {
    // MCP 2025-11-25 tasks: task-augmented tools/call, tasks/list and tasks/cancel.
    capabilities: { tools: { listChanged: false }, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: validator,
    taskStore,
    defaultTaskPollInterval: TASK_POLL_INTERVAL_MS,
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: LISTED_TOOLS }));

  // MCP tasks, Security: "receivers SHOULD implement rate limiting on task operations".
  // tasks/get and tasks/list are reads of the workspace's bucket (spec 8), as get_job and
  // list_jobs are: these two take the place of the SDK's handlers, answering as they do from
  // the same store after the limit. tasks/cancel counts as a write through its operation;
  // tasks/result (the SDK's), which waits, counts nothing, like the polling done on a
  // caller's behalf.
  server.setRequestHandler(GetTaskRequestSchema, async (request, extra) => {
    await countRead(extra.authInfo);
    const task = await taskStore.getTask(request.params.taskId);
    if (!task) throw new McpError(ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    return task;
  });
  // tasks/result blocks until the task ends (MCP tasks, Result Retrieval). The SDK's handler
  // reads the task every poll interval for as long as it waits; this one waits for the job's end
  // to be announced (lib/jobs/ended.ts) and reads it again at most every TASK_RESULT_RECHECK_MS.
  // A request cancelled (notifications/cancelled, the session closed) stops waiting at once.
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    const task = await readUntilJobEnds(
      taskId,
      () => taskStore.getTask(taskId),
      (t) => !t || isTerminal(t.status),
      { deadline: Infinity, recheckMs: TASK_RESULT_RECHECK_MS, signal: extra.signal },
    );
    if (!task) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    if (!isTerminal(task.status)) throw new McpError(ErrorCode.InvalidRequest, 'Request cancelled');
    const result = await taskStore.getTaskResult(taskId);
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  });
  server.setRequestHandler(ListTasksRequestSchema, async (request, extra) => {
    await countRead(extra.authInfo);
    return taskStore.listTasks(request.params?.cursor);
  });

  server.setRequestHandler(ToolsCallMethod, async (raw, extra): Promise<CallToolResult | CreateTaskResult> => {
    // The Server's wrapper has validated the request against CallToolRequestSchema by now.
    const request = raw as unknown as CallToolRequest;
    const tool = findTool(request.params.name);
    // MCP tools/call: an unknown tool is a protocol error, not a tool result.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    if (request.params.task) {
      // MCP tasks, tool-level negotiation: a tool without task support answers -32601.
      if (!tool.taskSupport) throw new McpError(ErrorCode.MethodNotFound, `${tool.name} does not run as a task; call it without \`task\`.`);
      return startTask(tool, request.params.arguments ?? {}, request.params.task.ttl, {
        request: requestAuthOf(extra.authInfo),
        session,
        deps,
        signal: extra.signal,
        progress: null,
        asTask: true,
        createTask: (creation, ttl) =>
          extra.taskStore!.createTask({
            ttl,
            pollInterval: TASK_POLL_INTERVAL_MS,
            context: creation as unknown as Record<string, unknown>,
          }),
      });
    }
    const token = extra._meta?.progressToken;
    const { result } = await runToolCall({
      tool,
      args: request.params.arguments ?? {},
      request: requestAuthOf(extra.authInfo),
      session,
      deps,
      signal: extra.signal,
      progress:
        token === undefined
          ? null
          : progressReporter((progress, message) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress, total: 1, ...(message ? { message } : {}) },
              }),
            ),
    });
    return result;
  });

  return server;
}

/** A tools/call's result, with the JSON text of its body when it succeeded (its text content). */
export interface ToolCallAnswer {
  result: CallToolResult;
  /** JSON.stringify of `result.structuredContent` on success (the text content is that string); null on a tool error. */
  bodyJson: string | null;
}

/**
 * One tools/call of a known tool, answered as the CallToolResult the Server sends: the body as
 * text and structured content, or the spec 4.9 error result. Shared by the Server's handler
 * and the direct answer of plain read calls (streamable.ts), so both give the same result.
 */
export async function runToolCall(
  call: ToolCallContext & { tool: ToolDefinition; args: Record<string, unknown> },
): Promise<ToolCallAnswer> {
  const { tool, request: auth } = call;
  try {
    const { body, replayed } = await tool.call(call, call.args);
    // MCP 2025-06-18 tools, structured content: the serialized JSON goes in a text block too
    // (for clients that read only content); serialized once, here, for both.
    const bodyJson = JSON.stringify(body);
    return { result: toolResult(body, auth.requestId, replayed, bodyJson), bodyJson };
  } catch (err) {
    return {
      result: toolError(asApiError(err, { requestId: auth.requestId, tool: tool.name, sessionId: call.session.id }), auth.requestId),
      bodyJson: null,
    };
  }
}

async function countRead(info: Parameters<typeof requestAuthOf>[0]): Promise<void> {
  const { auth, requestId } = requestAuthOf(info);
  try {
    await limitWorkspace('read', auth.workspaceId);
  } catch (err) {
    throw taskRefusal(asApiError(err, { requestId }), requestId);
  }
}

/** A successful tool's result (spec 4.9): the body as text and as structured content. */
function toolResult(body: Record<string, unknown>, requestId: string, replayed?: boolean, bodyJson = JSON.stringify(body)): CallToolResult {
  return {
    content: [{ type: 'text', text: bodyJson }],
    structuredContent: body,
    _meta: { requestId, ...(replayed !== undefined ? { idempotentReplayed: replayed } : {}) },
  };
}

/**
 * A task-augmented call (MCP 2025-11-25 tasks): the tool's operation runs as in a plain call
 * without a progressToken (the same pipeline, idempotency included) and answers the job it
 * queued, which becomes the task at once; nothing here waits for the job. A call refused
 * before a job exists has no task to answer and is a JSON-RPC error carrying the tool error's
 * fields.
 */
async function startTask(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  ttl: number | undefined,
  call: ToolCallContext & { createTask(creation: TaskCreation, ttl: number | undefined): Promise<CreateTaskResult['task']> },
): Promise<CreateTaskResult> {
  const { requestId } = call.request;
  if (tool.startsJob && !tool.startsJob(args)) {
    throw new McpError(ErrorCode.InvalidParams, `This ${tool.name} call answers at once and queues no job; call it without \`task\`.`);
  }
  // spec 4.4 wait_for_completion_ms holds a plain call's answer; a task answers at once.
  const { wait_for_completion_ms: _wait, ...taskArgs } = args;
  let job: Job;
  try {
    const { body } = await tool.call(call, 'wait_for_completion_ms' in (tool.inputSchema.properties ?? {}) ? taskArgs : args);
    job = body.data as Job;
    if (typeof job?.id !== 'string' || !job.id.startsWith('job_')) throw new Error(`${tool.name} answered no job to make a task of`);
  } catch (err) {
    throw taskRefusal(asApiError(err, { requestId, tool: tool.name, sessionId: call.session.id }), requestId);
  }
  const task = await call.createTask({ job, tool: tool.name }, ttl);
  return {
    task,
    _meta: {
      requestId,
      // MCP tasks, Creating Tasks: what a host may hand the model while the task runs.
      'io.modelcontextprotocol/model-immediate-response': `Queued job ${job.id} (${job.type}); its task id is the job id. Poll tasks/get, or call tasks/result for the final job.`,
    },
  };
}

/**
 * The JSON-RPC response to request `id` carrying `answer`, as the text JSON.stringify({ result,
 * jsonrpc, id }) gives, but with a successful body serialized once: its JSON (already made for
 * the text content) is spliced in as the structured content instead of being serialized again.
 * On a large answer (a knowledge search page, tens of KB) the second serialization was a tenth
 * of the door's CPU per call (docs/mcp.md "Benchmark").
 */
export function toolCallResponseJson({ result, bodyJson }: ToolCallAnswer, id: string | number): string {
  if (bodyJson === null) return JSON.stringify({ result, jsonrpc: '2.0', id });
  return (
    `{"result":{"content":[{"type":"text","text":${JSON.stringify(bodyJson)}}],` +
    `"structuredContent":${bodyJson},"_meta":${JSON.stringify(result._meta)}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`
  );
}
