import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListToolsRequestSchema, McpError, type CallToolRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import type { ApiDeps } from '../deps';
import { requestAuthOf } from './auth';
import { asApiError, toolError } from './errors';
import { progressReporter } from './progress';
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
].join('\n');

const LISTED_TOOLS = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: t.inputSchema,
  outputSchema: t.outputSchema,
  annotations: t.annotations,
}));

// One validator for every session: the SDK would otherwise compile a new Ajv per Server.
const validator = new AjvJsonSchemaValidator();

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
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: validator,
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: LISTED_TOOLS }));

  server.setRequestHandler(ToolsCallMethod, async (raw, extra): Promise<CallToolResult> => {
    // The Server's wrapper has validated the request against CallToolRequestSchema by now.
    const request = raw as unknown as CallToolRequest;
    const tool = findTool(request.params.name);
    // MCP tools/call: an unknown tool is a protocol error, not a tool result.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
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
    return {
      result: {
        content: [{ type: 'text', text: bodyJson }],
        structuredContent: body,
        _meta: { requestId: auth.requestId, ...(replayed !== undefined ? { idempotentReplayed: replayed } : {}) },
      },
      bodyJson,
    };
  } catch (err) {
    return {
      result: toolError(asApiError(err, { requestId: auth.requestId, tool: tool.name, sessionId: call.session.id }), auth.requestId),
      bodyJson: null,
    };
  }
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
