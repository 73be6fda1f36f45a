import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { errorBody } from './errors';

// spec 7.1 below the application: a request Node's HTTP parser refuses before Koa sees it (a
// request head over the 16 KB limit, a malformed request line or header) would otherwise get
// Node's bare "400 Bad Request" / "431" without a body. It gets the envelope instead, with
// 400 invalid_request (spec 7.2), and the connection is closed, since the parser cannot find
// where the next request would start.

const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request line and headers together exceed 16 KB; send long values in the body.',
};

export function answerParserErrorsWithEnvelope(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection the client already dropped has no one to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = newId('request');
    const body = JSON.stringify(
      errorBody(errors.invalidRequest(MESSAGES[err.code ?? ''] ?? 'The request is not valid HTTP/1.1.'), requestId),
    );
    socket.end(
      [
        'HTTP/1.1 400 Bad Request',
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Cache-Control: no-store',
        `X-Request-Id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
}
