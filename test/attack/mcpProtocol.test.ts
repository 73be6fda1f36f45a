import assert from 'node:assert/strict';
import { startMcpStack, type McpStack } from '../support/mcp';
import { workspaceWithKey } from '../support/factories';

// Malformed JSON-RPC at the MCP door, below what an SDK client would send: a client's mistake is
// a client error (JSON-RPC -32602 Invalid params / -32700 Parse error, or an HTTP 4xx), never
// -32603 Internal error, and never a tool run.

describe('MCP door: malformed JSON-RPC is a client error', function () {
  this.timeout(60_000);
  let stack: McpStack;
  let send: (body: string) => Promise<{ status: number; message: any }>;
  before(async () => {
    stack = await startMcpStack();
    const ws = await workspaceWithKey();
    const headers = {
      Authorization: `Bearer ${ws.key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    const init = await fetch(`${stack.mcpUrl}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    send = async (body) => {
      const res = await fetch(`${stack.mcpUrl}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        body,
      });
      const text = await res.text();
      // One JSON-RPC message, as JSON or as the data line of one SSE event.
      const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null');
      return { status: res.status, message: JSON.parse(json) };
    };
    await send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  });
  after(async () => {
    await stack.close();
  });

  const call = (params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params });

  for (const [label, params] of [
    ['arguments an array', { name: 'get_post', arguments: [] }],
    ['arguments a string', { name: 'get_post', arguments: 'postId=x' }],
    ['arguments null', { name: 'get_post', arguments: null }],
    ['name a number', { name: 123 }],
    ['name missing', {}],
    ['name an object', { name: { toString: 'get_post' } }],
  ] as const) {
    it(`tools/call with ${label} is -32602 Invalid params`, async () => {
      const { status, message } = await send(call(params));
      assert.ok(status < 500, String(status));
      assert.equal(message.error?.code, -32602, JSON.stringify(message));
      assert.equal(message.id, 7);
    });
  }

  it('an unknown tool is -32602 and a well-formed call still runs', async () => {
    assert.equal((await send(call({ name: 'no_such_tool', arguments: {} }))).message.error.code, -32602);
    const ok = await send(call({ name: 'get_post', arguments: { postId: 'post_doesnotexist' } }));
    assert.equal(ok.message.result.isError, true);
    assert.equal(ok.message.result.structuredContent.code, 'not_found');
  });

  it('a body that is not a JSON-RPC message is -32700 with HTTP 400', async () => {
    for (const body of ['{', 'null', '"x"', JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tools/list' }), call(null)]) {
      const { status, message } = await send(body);
      assert.equal(status, 400, body);
      assert.equal(message.error.code, -32700, body);
    }
  });
});
