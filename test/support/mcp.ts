import assert from 'node:assert/strict';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { CallToolResultSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { connect, startMcpStack, type McpStack } from '../mcp/support';
import { workspaceWithKey } from './factories';
import { testWorker, type TestActivities } from './worker';

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
