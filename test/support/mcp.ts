import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp } from '../../api/app';
import { closeMcp, createMcpApp } from '../../api/mcp/app';
import { config } from '../../lib/config';
import { startLlmStub, type LlmStub } from '../../sim/llm/server';
import { client, serveOnEphemeralPort } from './app';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { CallToolResultSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { workspaceWithKey } from './factories';
import { llmStubWriter, testWorker, type TestActivities } from './worker';

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

// ---------------------------------------------------------------------------------------------
// The agent-door suites' common set-up: the REST and MCP apps on real HTTP plus a Temporal worker
// for the jobs their tools queue, and a tool call that follows its job with notifications/progress
// (spec 4.9) checked the same way everywhere.

export interface McpHarness {
  /** The stack of the current suite (set in its `before`). */
  readonly stack: McpStack;
  /** A new workspace with a full-scope key and a streamable-HTTP client connected with it. */
  agent(opts?: Parameters<typeof workspaceWithKey>[0]): Promise<{
    ws: Awaited<ReturnType<typeof workspaceWithKey>>;
    client: Client;
  }>;
}

/** Registers the suite's hooks: the stack and a worker before, both stopped after; clients opened by `agent` closed too. */
export function useMcpWithWorker(activities?: () => TestActivities): McpHarness {
  let stack: McpStack | undefined;
  const worker = testWorker();
  const clients: Client[] = [];
  before(async () => {
    stack = await startMcpStack();
    await worker.start(activities?.());
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  });
  after(async () => {
    await worker.stop();
    await stack?.close();
  });
  return {
    get stack() {
      if (!stack) throw new Error('the MCP stack starts in the suite’s before hook');
      return stack;
    },
    async agent(opts) {
      const ws = await workspaceWithKey(opts);
      const client = await connect('streamable', this.stack.mcpUrl, ws.key);
      clients.push(client);
      return { ws, client };
    },
  };
}

/**
 * Calls an async tool with a progressToken and checks the progress contract (docs/mcp.md): the
 * first notification is 0, they only grow, the last is 1, and the result comes after the last one.
 * Answers the tool result's `data` (the finished job).
 */
export async function callFollowingJob<T = any>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ data: T; progress: Progress[]; result: CallToolResult }> {
  const progress: Progress[] = [];
  let lastProgressAt = 0;
  const result = (await client.callTool({ name, arguments: args }, CallToolResultSchema, {
    onprogress: (p) => {
      progress.push(p);
      lastProgressAt = Date.now();
    },
    resetTimeoutOnProgress: true,
  })) as CallToolResult;
  const resultAt = Date.now();
  assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
  assert.ok(progress.length >= 2, `${name} sent ${progress.length} progress notification(s)`);
  assert.equal(progress[0]!.progress, 0);
  assert.equal(progress.at(-1)!.progress, 1);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress, 'progress only grows');
  assert.ok(resultAt >= lastProgressAt, 'the result follows the last notification');
  return { data: (result.structuredContent as { data: T }).data, progress, result };
}

/**
 * An MCP host's token store for the SDK client's auth() flow. `keepRefreshTokens: false` is a
 * host that never stores one; with `serverUrlAsResource` the host names the server URL as the
 * resource, as a validateResourceURL provider may.
 */
export class SdkHost implements OAuthClientProvider {
  readonly redirectUrl: string;
  /** A host that publishes a Client ID Metadata Document names it here (docs/oauth.md); the SDK then uses it as client_id. */
  readonly clientMetadataUrl?: string;
  authorizationUrls: URL[] = [];
  private client?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier?: string;
  constructor(
    private readonly opts: {
      keepRefreshTokens?: boolean;
      serverUrlAsResource?: boolean;
      redirectUrl?: string;
      clientMetadataUrl?: string;
      clientName?: string;
    } = {},
  ) {
    this.redirectUrl = opts.redirectUrl ?? 'http://127.0.0.1:9/callback';
    if (opts.clientMetadataUrl) this.clientMetadataUrl = opts.clientMetadataUrl;
    if (opts.serverUrlAsResource) (this as OAuthClientProvider).validateResourceURL = async (serverUrl) => new URL(serverUrl);
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.opts.clientName ?? 'SDK test host',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = this.opts.keepRefreshTokens === false ? { ...tokens, refresh_token: undefined } : tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier!;
  }
}
