import http from 'node:http';
import { requestText } from '../harness/load';

// The MCP benches' clients (bench/mcp.ts, bench/knowledge.ts): SDK sessions, and a plain HTTP
// client speaking a streamable MCP session.

/** `n` sessions of the official MCP SDK client with `token` on the server at `baseUrl`, over streamable HTTP or SSE. */
export async function openSdkSessions(baseUrl: string, token: string, n: number, kind: 'streamable' | 'sse' = 'streamable') {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
  const requestInit = { headers: { Authorization: `Bearer ${token}` } };
  return Promise.all(
    Array.from({ length: n }, async () => {
      const client = new Client({ name: 'bench', version: '1' });
      const transport =
        kind === 'streamable'
          ? new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit })
          : new SSEClientTransport(new URL('/sse', baseUrl), { requestInit });
      await client.connect(transport);
      return { client, transport };
    }),
  );
}

const JSON_RPC = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

/** The JSON-RPC answer in a body that is JSON or an SSE stream. */
function answerOf(text: string, contentType: string | undefined): { result?: { isError?: boolean; protocolVersion?: string } } | null {
  if (contentType?.startsWith('application/json')) return JSON.parse(text);
  for (const line of text.split('\n').reverse()) {
    const msg = line.startsWith('data: ') ? JSON.parse(line.slice(6)) : {};
    if ('result' in msg || 'error' in msg) return msg;
  }
  return null;
}

/**
 * A streamable HTTP session spoken by a plain keep-alive HTTP client, so that its CPU per call is
 * the REST client's and the ratio to REST measures the server's door, not the SDK client's.
 */
export async function openPlainSession(url: URL, token: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let headers: Record<string, string> = { authorization: `Bearer ${token}`, ...JSON_RPC };
  let nextId = 1;
  const send = (method: string, message?: object) =>
    requestText(agent, url, method, headers, message && JSON.stringify({ jsonrpc: '2.0', ...message }));
  const params = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-plain', version: '1' } };
  const init = await send('POST', { id: 0, method: 'initialize', params });
  const sid = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof sid !== 'string') throw new Error(`initialize answered ${init.status}`);
  const protocolVersion = answerOf(init.body, init.headers['content-type'])?.result?.protocolVersion ?? params.protocolVersion;
  headers = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': protocolVersion };
  const ack = await send('POST', { method: 'notifications/initialized' });
  if (ack.status !== 202) throw new Error(`notifications/initialized answered ${ack.status}`);
  return {
    /** One tools/call: whether it succeeded, and the answer's text (to show a failure). */
    async call(name: string, args: Record<string, unknown>) {
      const res = await send('POST', { id: nextId++, method: 'tools/call', params: { name, arguments: args } });
      if (res.status !== 200) return { ok: false, text: `${res.status} ${res.body}` };
      const answer = answerOf(res.body, res.headers['content-type']);
      return { ok: !!answer?.result && answer.result.isError !== true, text: res.body };
    },
    close: () =>
      send('DELETE')
        .catch(() => undefined)
        .finally(() => agent.destroy()),
  };
}
