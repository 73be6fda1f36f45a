import http from 'node:http';
import { requestText as exchange } from '../harness/load';

// The MCP benches' clients (bench/mcp.ts, bench/knowledge.ts): SDK sessions, and a plain HTTP
// client speaking a streamable MCP session.

/** `n` sessions of the official MCP SDK client on the server at `baseUrl`, over streamable HTTP or SSE. */
export async function openSdkSessions(
  baseUrl: string,
  headers: Record<string, string>,
  n: number,
  kind: 'streamable' | 'sse' = 'streamable',
) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
  return Promise.all(
    Array.from({ length: n }, async () => {
      const client = new Client({ name: 'bench', version: '1' });
      const transport =
        kind === 'streamable'
          ? new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers } })
          : new SSEClientTransport(new URL('/sse', baseUrl), { requestInit: { headers } });
      await client.connect(transport);
      return { client, transport };
    }),
  );
}

/** The JSON-RPC answer in a body that is JSON or an SSE stream. */
function answerOf(text: string, contentType: string | undefined): { result?: { isError?: boolean; protocolVersion?: string } } | null {
  if (contentType?.startsWith('application/json')) return JSON.parse(text);
  for (const line of text.split('\n').reverse()) {
    if (!line.startsWith('data: ')) continue;
    const msg = JSON.parse(line.slice(6));
    if ('result' in msg || 'error' in msg) return msg;
  }
  return null;
}

/**
 * A streamable HTTP session spoken by a plain keep-alive HTTP client, so that its CPU per call is
 * the REST client's and the ratio to REST measures the server's door, not the SDK client's.
 */
export class PlainSession {
  private sessionId = '';
  private protocolVersion = '2025-06-18';
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private nextId = 1;
  constructor(
    private readonly url: URL,
    private readonly token: string,
  ) {}

  private send(method: string, message?: object) {
    const headers = {
      authorization: `Bearer ${this.token}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(this.sessionId ? { 'mcp-session-id': this.sessionId, 'mcp-protocol-version': this.protocolVersion } : {}),
    };
    return exchange(this.agent, this.url, method, headers, message && JSON.stringify({ jsonrpc: '2.0', ...message }));
  }

  async open(): Promise<void> {
    const clientInfo = { name: 'bench-plain', version: '1' };
    const init = await this.send('POST', {
      id: 0,
      method: 'initialize',
      params: { protocolVersion: this.protocolVersion, capabilities: {}, clientInfo },
    });
    const sid = init.headers['mcp-session-id'];
    if (init.status !== 200 || typeof sid !== 'string') throw new Error(`initialize answered ${init.status}`);
    this.sessionId = sid;
    this.protocolVersion = answerOf(init.body, init.headers['content-type'])?.result?.protocolVersion ?? this.protocolVersion;
    const ack = await this.send('POST', { method: 'notifications/initialized' });
    if (ack.status !== 202) throw new Error(`notifications/initialized answered ${ack.status}`);
  }

  /** One tools/call: whether it succeeded, and the answer's text (to show a failure). */
  async call(name: string, args: Record<string, unknown>): Promise<{ ok: boolean; text: string }> {
    const res = await this.send('POST', { id: this.nextId++, method: 'tools/call', params: { name, arguments: args } });
    if (res.status !== 200) return { ok: false, text: `${res.status} ${res.body}` };
    const answer = answerOf(res.body, res.headers['content-type']);
    return { ok: !!answer?.result && answer.result.isError !== true, text: res.body };
  }

  async close(): Promise<void> {
    await this.send('DELETE').catch(() => undefined);
    this.agent.destroy();
  }
}
