import assert from 'node:assert/strict';
import { connect as tcpConnect } from 'node:net';
import { MCP_CORS_HEADERS } from '../../api/mcp/cors';
import { workspaceWithKey } from '../support/factories';
import { assertErrorEnvelope, startApiProcess, type ApiProcess } from '../support/foundation';

// spec 7.1 for requests Node's HTTP parser refuses before the application runs: the API process
// (api/main.ts, listeners of api/listen.ts) answers them with 400 invalid_request, not a bare
// status line: the envelope on the REST origin, the MCP door's JSON-RPC error (spec 4.9: `data`
// carries code, requestId, documentationUrl) on the MCP transport, with the CORS headers of every
// MCP answer, so a browser agent can read it.

function raw(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(new Error('no answer'));
    });
  });
}

function assertEnvelope(response: string, what: string) {
  const [head, body] = [response.slice(0, response.indexOf('\r\n\r\n')), response.slice(response.indexOf('\r\n\r\n') + 4)];
  assert.match(head, /^HTTP\/1\.1 400 /, `${what}: ${head}`);
  assert.match(head, /content-type: application\/json/i, what);
  assert.equal(assertErrorEnvelope(JSON.parse(body), what).code, 'invalid_request', what);
}

/** The head's header lines by lower-case name. */
function headersOf(head: string): Map<string, string> {
  return new Map(
    head
      .split('\r\n')
      .slice(1)
      .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as const),
  );
}

/** The CORS headers of an answer of the MCP app itself, which a refusal must match. */
let mcpAppCors: Record<string, string>;

function assertMcpRefusal(response: string, what: string) {
  const [head, body] = [response.slice(0, response.indexOf('\r\n\r\n')), response.slice(response.indexOf('\r\n\r\n') + 4)];
  assert.match(head, /^HTTP\/1\.1 400 /, `${what}: ${head}`);
  assert.match(head, /content-type: application\/json/i, what);
  const headers = headersOf(head);
  for (const name of Object.keys(mcpAppCors)) assert.equal(headers.get(name), mcpAppCors[name], `${what}: ${name}`);
  const requestId = /x-request-id: (\S+)/i.exec(head)?.[1];
  const parsed = JSON.parse(body);
  assert.equal(parsed.jsonrpc, '2.0', what);
  assert.equal(parsed.id, null, what);
  assert.equal(parsed.error.data.code, 'invalid_request', what);
  assert.equal(parsed.error.data.requestId, requestId, what);
  assert.match(parsed.error.data.requestId, /^req_/, what);
  assert.equal(typeof parsed.error.data.documentationUrl, 'string', what);
}

describe('requests refused by the HTTP parser still get the envelope (spec 7.1)', function () {
  this.timeout(60_000);
  let api: ApiProcess;
  let key: string;
  before(async () => {
    api = await startApiProcess();
    key = (await workspaceWithKey()).key;
    const answer = await fetch(`${api.mcpUrl}/.well-known/oauth-protected-resource`);
    mcpAppCors = Object.fromEntries(Object.keys(MCP_CORS_HEADERS).map((n) => [n.toLowerCase(), answer.headers.get(n) ?? '(absent)']));
    assert.equal(mcpAppCors['access-control-allow-origin'], '*');
    assert.match(mcpAppCors['access-control-expose-headers']!, /X-Request-Id/);
  });
  after(async () => {
    await api?.close();
  });

  it('a request head over 16 KB: a long URL, or a long header', async () => {
    const longUrl = await fetch(`${api.url}/v1/posts?projectId=${'x'.repeat(20_000)}`, { headers: { Authorization: `Bearer ${key}` } });
    assert.equal(longUrl.status, 400);
    const body = (await longUrl.json()) as any;
    assert.equal(body.error.code, 'invalid_request');
    assert.match(body.error.message, /16 KB/);
    assertEnvelope(await raw(api.url, `GET /v1/posts HTTP/1.1\r\nHost: x\r\nX-Pad: ${'y'.repeat(20_000)}\r\n\r\n`), 'long header');
  });

  it('malformed HTTP: a bad request line, a bad header, a bad chunk', async () => {
    assertEnvelope(await raw(api.url, 'GARBAGE\r\n\r\n'), 'request line');
    assertEnvelope(await raw(api.url, 'GET /v1/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'), 'header without colon');
    assertEnvelope(await raw(api.url, 'POST /v1/posts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'), 'chunk size');
    assertEnvelope(
      await raw(api.url, 'GET /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n'),
      'two Content-Length values',
    );
  });

  it('the MCP transport: a 17 KB request head, a bad request line, a bad header, all 400 invalid_request with the CORS headers', async () => {
    const longUrl = await fetch(`${api.mcpUrl}/mcp?x=${'x'.repeat(17 * 1024)}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(longUrl.status, 400);
    // What a browser needs to let the page read the refusal and its request id.
    for (const name of Object.keys(mcpAppCors)) assert.equal(longUrl.headers.get(name), mcpAppCors[name], name);
    const body = (await longUrl.json()) as any;
    assert.equal(body.error.data.code, 'invalid_request');
    assert.match(body.error.data.message, /16 KB/);
    assertMcpRefusal(await raw(api.mcpUrl, `POST /mcp HTTP/1.1\r\nHost: x\r\nX-Pad: ${'y'.repeat(17 * 1024)}\r\n\r\n`), 'long header');
    assertMcpRefusal(await raw(api.mcpUrl, 'GARBAGE\r\n\r\n'), 'request line');
    assertMcpRefusal(await raw(api.mcpUrl, 'GET /sse HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'), 'header without colon');
  });

  it('keeps serving well-formed requests afterwards, on both doors', async () => {
    assert.equal((await fetch(`${api.url}/v1/health`)).status, 200);
    assert.equal((await fetch(`${api.mcpUrl}/.well-known/oauth-protected-resource`)).status, 200);
  });
});
