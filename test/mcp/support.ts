import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApp } from '../../api/app';
import { closeMcp, createMcpApp } from '../../api/mcp/app';
import { config } from '../../lib/config';
import { startLlmStub, type LlmStub } from '../../sim/llm/server';
import { llmStubWriter, testWorker } from '../support/worker';
import { client, serveOnEphemeralPort } from '../support/app';

// The MCP suites' harness: the REST/OAuth app and the MCP app, each a real HTTP server on an
// ephemeral port in this process (config's public URLs pointed at them, as the OAuth tests do),
// real MCP SDK clients over both transports. A second API *process* for the cross-process cases
// is startApiProcess (test/support/foundation.ts); OAuth tokens come from the real authorization
// server (agentToken, test/oauth/support.ts).

export interface McpStack {
  apiUrl: string;
  mcpUrl: string;
  close(): Promise<void>;
}

export async function startMcpStack(): Promise<McpStack> {
  const api = await serveOnEphemeralPort(createApp());
  const mcp = await serveOnEphemeralPort(createMcpApp(), 'mcp');
  const previous = { publicUrl: config.publicUrl, mcpPublicUrl: config.mcpPublicUrl };
  Object.assign(config, { publicUrl: api.url, mcpPublicUrl: mcp.url });
  return {
    apiUrl: api.url,
    mcpUrl: mcp.url,
    async close() {
      await closeMcp();
      await Promise.all([api.close(), mcp.close()]);
      Object.assign(config, previous);
    },
  };
}

/** The stack of the enclosing `describe`: started in its `before`, closed in its `after`. */
export function useMcpStack(): McpStack {
  const stack = {} as McpStack;
  before(async () => {
    Object.assign(stack, await startMcpStack());
  });
  after(async () => {
    await stack.close();
  });
  return stack;
}

export type TransportName = 'streamable' | 'sse';
export const TRANSPORTS: TransportName[] = ['streamable', 'sse'];

export interface ConnectOptions {
  headers?: Record<string, string>;
  /** Routes requests (e.g. to another process) the way a load balancer would. */
  fetch?: typeof fetch;
}

/** An MCP SDK client over either transport with a static bearer credential. */
export async function connect(kind: TransportName, mcpUrl: string, token: string, opts: ConnectOptions = {}): Promise<Client> {
  const headers = { Authorization: `Bearer ${token}`, ...opts.headers };
  const client = new Client({ name: 'mcp-test-agent', version: '1.0.0' });
  const transport =
    kind === 'streamable'
      ? new StreamableHTTPClientTransport(new URL('/mcp', mcpUrl), { requestInit: { headers }, fetch: opts.fetch })
      : new SSEClientTransport(new URL('/sse', mcpUrl), { requestInit: { headers }, fetch: opts.fetch });
  await client.connect(transport);
  // The SDK client validates a tool's structuredContent against its outputSchema once it has
  // listed the tools (MCP 2025-06-18): listing here holds every call of the suites to it.
  await client.listTools();
  return client;
}

/** The session id a client is using, whichever the transport. */
export function sessionIdOf(client: Client): string {
  const t = client.transport as unknown as { sessionId?: string; _endpoint?: URL };
  const id = t.sessionId ?? t._endpoint?.searchParams.get('sessionId');
  assert.ok(id, 'the client has no session');
  return id;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured content of a successful call. */
export async function ok<T = any>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const r = await callTool(client, name, args);
  assert.notEqual(r.isError, true, `${name} failed: ${JSON.stringify(r.structuredContent ?? r.content)}`);
  return r.structuredContent as T;
}

/** Asserts an isError result with spec 4.9's structured content and returns it. */
export async function fails(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  code: string,
): Promise<{ code: string; message: string; requestId: string; documentationUrl: string; details?: any }> {
  const r = await callTool(client, name, args);
  assert.equal(r.isError, true, `${name} should fail with ${code}: ${JSON.stringify(r.structuredContent)}`);
  const s = r.structuredContent as { code: string; message: string; requestId: string; documentationUrl: string };
  assert.equal(s.code, code, s.message);
  assert.match(s.requestId, /^req_/);
  assert.doesNotThrow(() => new URL(s.documentationUrl));
  assert.equal(typeof s.message, 'string');
  return s;
}

/**
 * A tool's REST twin called positionally (method, path, body, headers), through the suites' one
 * REST caller (test/support/app.ts `client`), so every answer is checked against the contract too.
 */
export function rest(apiUrl: string, token: string, defaults: Record<string, string> = {}) {
  const call = client(apiUrl, token, defaults);
  return (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => call(method, p, { body, headers });
}

/** A fetch that sends requests for `from`'s origin to `to` instead (a load balancer's choice). */
export function rerouting(from: string, to: string, when: (url: URL, init?: RequestInit) => boolean): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin === new URL(from).origin && when(url, init)) {
      const target = new URL(url.pathname + url.search, to);
      return fetch(target, init);
    }
    return fetch(input, init);
  }) as typeof fetch;
}

// ---------------------------------------------------------------------------------------------
// A worker for generation jobs, writing through the LLM stub (a real HTTP server).

export interface GenerationWorker {
  stub: LlmStub;
  stop(): Promise<void>;
}

export async function startGenerationWorker(): Promise<GenerationWorker> {
  const stub = await startLlmStub();
  const worker = testWorker({ writer: llmStubWriter(stub, 20_000) });
  await worker.start();
  return {
    stub,
    async stop() {
      await worker.stop();
      await stub.close();
    },
  };
}

export const GENERATION_SOURCE = {
  type: 'text',
  text: 'We moved our release checklist into the pipeline this quarter. Every deploy now runs the same twelve checks, and rollbacks dropped by half.',
};
