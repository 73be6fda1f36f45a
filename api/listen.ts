import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { errors, type ApiError } from '../lib/errors';
import { newId } from '../lib/ids';
import { MCP_CORS_HEADERS } from './mcp/cors';
import { jsonRpcErrorBody } from './mcp/errors';
import { errorBody } from './rest/errors';

// How every HTTP server of the API is set up: the REST/OAuth origin and the MCP transport in
// api/main.ts, the in-process servers of the test suite and the bench servers that stand for
// the API. One place, so a test server refuses, times out and limits requests as production does.

/** Node's own default, stated so the refusal below can name it. */
export const MAX_REQUEST_HEAD_BYTES = 16 * 1024;

/** Longer than the 60 s idle timeout of common load balancers, so the balancer closes first. */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Which door a server is: each answers a refused request in its own error shape (CONVENTIONS habit 3). */
export type Door = 'rest' | 'mcp';

const REFUSAL_BODY: Record<Door, (err: ApiError, requestId: string) => unknown> = {
  // spec 7.1: the envelope.
  rest: errorBody,
  // spec 4.9: a request refused before any tool runs gets a JSON-RPC error carrying the same fields.
  mcp: jsonRpcErrorBody,
};

/**
 * Headers the door's app sets on every answer and the refusal must carry too: on the MCP door,
 * CORS, without which a browser agent cannot read the 400 (api/mcp/cors.ts). The REST door
 * answers CORS on its OAuth and OpenAPI routes only, which a refused request never reached.
 */
const REFUSAL_HEADERS: Record<Door, Readonly<Record<string, string>>> = {
  rest: {},
  mcp: MCP_CORS_HEADERS,
};

const PARSER_MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: `The request line and headers together exceed ${MAX_REQUEST_HEAD_BYTES / 1024} KB; send long values in the body.`,
};

/**
 * spec 7.1 below the application: a request Node's HTTP parser refuses before Koa sees it (a
 * request head over the limit, a malformed request line, header or chunk) would otherwise get
 * Node's bare "400 Bad Request" or "431" without a body. It gets the door's error body instead,
 * with 400 invalid_request (spec 7.2), and the connection is closed, since the parser cannot find
 * where the next request would start.
 */
function answerParserErrors(server: Server, door: Door): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection the client already dropped has no one to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = newId('request');
    const refusal = errors.invalidRequest(PARSER_MESSAGES[err.code ?? ''] ?? 'The request is not valid HTTP/1.1.');
    const body = JSON.stringify(REFUSAL_BODY[door](refusal, requestId));
    socket.end(
      [
        'HTTP/1.1 400 Bad Request',
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Cache-Control: no-store',
        `X-Request-Id: ${requestId}`,
        ...Object.entries(REFUSAL_HEADERS[door]).map(([name, value]) => `${name}: ${value}`),
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
}

/** The HTTP server of one door, not yet listening (a bench child listens on its own terms). */
export function createDoorServer(app: Koa, door: Door): Server {
  const server = createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, app.callback());
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  answerParserErrors(server, door);
  return server;
}

export interface ListenOptions {
  door: Door;
  /** 0 for an ephemeral port. */
  port: number;
  /** Every interface when omitted. */
  host?: string;
}

/** The door's server, listening; rejects when the port cannot be taken. */
export function listen(app: Koa, opts: ListenOptions): Promise<Server> {
  const server = createDoorServer(app, opts.door);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.port, host: opts.host }, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
