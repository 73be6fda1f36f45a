import assert from 'node:assert/strict';
import { connect as tcpConnect, type Socket } from 'node:net';
import { IMPORT_BODY_LIMIT_BYTES } from '../../api/operations/media/media';
import { MAX_MESSAGE_BYTES } from '../../api/mcp/http';
import { config } from '../../lib/config';
import { workspaceWithKey } from '../support/factories';
import { assertErrorEnvelope } from '../support/foundation';
import { connect, useMcpStack } from '../support/mcp';

// Spec 4.7 and 8 (a body over its limit gets a 413, a bare one at the media import's edge) as
// a client on Node's own fetch (undici, the MCP SDK's transport) meets it: the answer is read,
// not lost to a reset while the client is still sending (RFC 9112 9.6, the lingering close of
// api/rawBody.ts), on the REST door, its OAuth endpoints and the MCP door; and the rest of a body is
// discarded within config.bodyDiscard's bounds, never read forever.

/** A body of `total` bytes sent in 64 KiB chunks without a Content-Length (chunked), as a stream upload is. */
function streamedBody(total: number): { body: ReadableStream<Uint8Array>; sent: () => number } {
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent >= total) return controller.close();
      // Paced like a network, so that the answer arrives while the client is still sending.
      await new Promise((r) => setTimeout(r, 2));
      controller.enqueue(chunk);
      sent += chunk.length;
    },
  });
  return { body, sent: () => sent };
}

/** Node's global fetch; the body is a string (declared Content-Length) or a stream (chunked). */
async function post(url: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', headers, body, ...(typeof body === 'string' ? {} : { duplex: 'half' }) } as RequestInit);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** An inline image of `decoded` bytes in a media import body (spec 4.7). */
function inlineImageBody(projectId: string, decoded: number): string {
  return JSON.stringify({ projectId, content_base64: Buffer.alloc(decoded, 7).toString('base64'), fileName: 'big.png' });
}

describe('bodies over their limit: the 413 reaches a fetch client (spec 4.7, 8; RFC 9112 9.6)', function () {
  this.timeout(120_000);
  const stack = useMcpStack();
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  before(async () => {
    ws = await workspaceWithKey({ projects: 1 });
  });
  const auth = () => ({ Authorization: `Bearer ${ws.key}`, 'Content-Type': 'application/json' });

  describe('the REST door', () => {
    it('an inline image of 4 MB decoded: the bare 413 with Connection: close, read by fetch', async () => {
      const body = inlineImageBody(ws.projects[0]!.id, 4 * 1024 * 1024);
      assert.ok(body.length > IMPORT_BODY_LIMIT_BYTES);
      for (let i = 0; i < 3; i++) {
        const res = await post(`${stack.apiUrl}/v1/media`, body, auth());
        assert.equal(res.status, 413);
        assert.equal(res.headers.get('connection'), 'close');
        // spec 4.7: bare, no JSON envelope.
        assert.equal(res.text, 'Request Entity Too Large');
      }
      // The same import within the edge still works on a fresh connection.
      const small = await post(`${stack.apiUrl}/v1/media`, inlineImageBody(ws.projects[0]!.id, 10), auth());
      assert.notEqual(small.status, 413);
    });

    it('the same image streamed without a Content-Length: cut at the edge, the 413 still read', async () => {
      const stream = streamedBody(6 * 1024 * 1024);
      const res = await post(`${stack.apiUrl}/v1/media`, stream.body, auth());
      assert.equal(res.status, 413);
      assert.equal(res.headers.get('connection'), 'close');
      assert.equal(res.text, 'Request Entity Too Large');
    });

    it('the default body limit answers the envelope (spec 7.1), declared or streamed', async () => {
      const declared = await post(`${stack.apiUrl}/v1/posts`, JSON.stringify({ content: 'x'.repeat(3 * 1024 * 1024) }), auth());
      const streamed = await post(`${stack.apiUrl}/v1/posts`, streamedBody(4 * 1024 * 1024).body, auth());
      for (const res of [declared, streamed]) {
        assert.equal(res.status, 413);
        assert.equal(res.headers.get('connection'), 'close');
        assert.equal(assertErrorEnvelope(JSON.parse(res.text), '413').code, 'payload_too_large');
      }
    });

    it('an OAuth form body over the limit: the envelope with the code, read by fetch', async () => {
      const res = await post(`${stack.apiUrl}/oauth/token`, streamedBody(4 * 1024 * 1024).body, {
        'Content-Type': 'application/x-www-form-urlencoded',
      });
      assert.equal(res.status, 413);
      assert.equal(res.headers.get('connection'), 'close');
      assert.equal(assertErrorEnvelope(JSON.parse(res.text), '413').code, 'payload_too_large');
    });
  });

  describe('the MCP door', () => {
    const mcpHeaders = () => ({ ...auth(), Accept: 'application/json, text/event-stream' });
    const overMessageLimit = () => {
      // spec 4.9 / 8: create_source_file over the 25 MB inline file, and over the message limit.
      const b64 = Buffer.alloc(Math.ceil((MAX_MESSAGE_BYTES * 3) / 4) + 1024, 7).toString('base64');
      return JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'create_source_file', arguments: { type: 'file', content_base64: b64, mimeType: 'audio/mpeg', filename: 'a.mp3' } },
      });
    };
    const assertJsonRpc413 = (res: { status: number; headers: Headers; text: string }) => {
      assert.equal(res.status, 413);
      assert.equal(res.headers.get('connection'), 'close');
      const err = JSON.parse(res.text).error;
      assert.equal(err.data.code, 'payload_too_large');
      assert.match(err.data.requestId, /^req_/);
    };

    it('a message over the limit, declared or streamed: the JSON-RPC error in a 413, read by fetch', async () => {
      assertJsonRpc413(await post(`${stack.mcpUrl}/mcp`, overMessageLimit(), mcpHeaders()));
      assertJsonRpc413(await post(`${stack.mcpUrl}/mcp`, streamedBody(MAX_MESSAGE_BYTES + 4 * 1024 * 1024).body, mcpHeaders()));
    });

    it("the MCP SDK client's transport reads the 413 instead of failing on the socket", async () => {
      const client = await connect('streamable', stack.mcpUrl, ws.key);
      try {
        const b64 = Buffer.alloc(Math.ceil((MAX_MESSAGE_BYTES * 3) / 4) + 1024, 7).toString('base64');
        await assert.rejects(
          client.callTool({
            name: 'create_source_file',
            arguments: { type: 'file', content_base64: b64, mimeType: 'audio/mpeg', filename: 'a.mp3' },
          }),
          (err: Error & { code?: number }) => {
            // The SDK's StreamableHTTPError carries the HTTP status and the body it read.
            assert.equal(err.code, 413, err.message);
            assert.match(err.message, /payload_too_large/);
            return true;
          },
        );
      } finally {
        await client.close();
      }
    });
  });

  describe('the discard is bounded', () => {
    const saved = { ...config.bodyDiscard };
    afterEach(() => Object.assign(config.bodyDiscard, saved));

    /**
     * A raw connection that sends a media import head and then an endless chunked body, as fast
     * as the server takes it or 64 KiB every `trickleMs`; resolves when the server closes it,
     * with the answer read, the body bytes sent and how long the connection stayed open after
     * the answer arrived.
     */
    function endlessUpload(url: string, trickleMs?: number): Promise<{ answer: string; sent: number; openAfterAnswerMs: number }> {
      const { hostname, port } = new URL(url);
      return new Promise((resolve) => {
        const socket: Socket = tcpConnect(Number(port), hostname);
        let answer = '';
        let answeredAt = 0;
        let sent = 0;
        let open = true;
        const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x61), Buffer.from('\r\n')]);
        const pump = () => {
          while (open) {
            sent += 0x10000;
            if (trickleMs !== undefined) {
              socket.write(chunk);
              setTimeout(pump, trickleMs);
              return;
            }
            if (!socket.write(chunk)) return void socket.once('drain', pump);
          }
        };
        socket.on('data', (d) => {
          answeredAt ||= Date.now();
          answer += d.toString('latin1');
        });
        socket.on('error', () => undefined);
        socket.on('close', () => {
          open = false;
          resolve({ answer, sent, openAfterAnswerMs: Date.now() - answeredAt });
        });
        socket.write(
          `POST /v1/media HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer ${ws.key}\r\n\r\n`,
        );
        pump();
      });
    }

    it('past maxBytes of discarded body the connection is cut, the 413 sent before', async () => {
      const maxBytes = 2 * 1024 * 1024;
      Object.assign(config.bodyDiscard, { maxBytes, maxMs: 60_000 });
      const r = await endlessUpload(stack.apiUrl);
      assert.match(r.answer, /^HTTP\/1\.1 413 /);
      assert.match(r.answer, /\r\nConnection: close\r\n/i);
      // The server read the edge and the discard bound before cutting (what the client sent
      // includes what the sockets' buffers held), and cut long before the time bound.
      assert.ok(r.sent >= IMPORT_BODY_LIMIT_BYTES + maxBytes, `${r.sent} bytes sent`);
      assert.ok(r.sent < IMPORT_BODY_LIMIT_BYTES + maxBytes + 64 * 1024 * 1024, `${r.sent} bytes sent`);
      assert.ok(r.openAfterAnswerMs < 30_000, `${r.openAfterAnswerMs} ms`);
    });

    it('past maxMs the connection is cut, however slowly the body comes; until then it is read', async () => {
      Object.assign(config.bodyDiscard, { maxBytes: 1024 ** 3, maxMs: 1_000 });
      // 64 KiB every 20 ms: over the edge after about a second, never near the byte bound.
      const r = await endlessUpload(stack.apiUrl, 20);
      assert.match(r.answer, /^HTTP\/1\.1 413 /);
      // The connection lingers after the answer (the body is still read), and not past the bound
      // (the lower limit leaves room for a loaded machine: without the linger it is 0 ms).
      assert.ok(r.openAfterAnswerMs >= 500 && r.openAfterAnswerMs < 10_000, `${r.openAfterAnswerMs} ms`);
    });
  });
});
