import type { IncomingMessage, ServerResponse } from 'node:http';
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { config } from '../lib/config';
import { errors } from '../lib/errors';

// The one body reader of every door (REST, OAuth, MCP), on raw-body: a declared
// Content-Length over the limit is refused before a byte is read, a streamed body is cut off
// at the limit, and both answer 413 payload_too_large in the door's envelope, followed by a
// lingering close.

/** The body as text ('' when there is none). */
export async function readBodyText(ctx: Context, limit: number, what = 'request body'): Promise<string> {
  const declared = ctx.get('content-length');
  try {
    const raw = await getRawBody(ctx.req, { limit, length: declared === '' ? undefined : declared });
    return raw.toString('utf8');
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      lingeringClose(ctx.req, ctx.res);
      throw errors.payloadTooLarge(`The ${what} is larger than ${limit} bytes.`);
    }
    if (type === 'request.size.invalid') throw errors.invalidRequest('The request body does not match its Content-Length.');
    // A client that went away: the error boundaries answer nothing to it (499).
    if (type === 'request.aborted') throw Object.assign(new Error('request aborted'), { code: 'ECONNRESET' });
    throw err;
  }
}

/**
 * RFC 9112 9.6: a connection closed while the client is still sending makes the server's TCP
 * stack answer the rest with a reset, which can erase the answer before the client reads it (a
 * fetch/undici client, the MCP SDK's among them, then sees EPIPE instead of the 413). So the
 * answer to a body over its limit says `Connection: close` and leaves whole at once; the rest of
 * the body is read and thrown away, and the connection closes when the body has ended, or is
 * cut off after config.bodyDiscard.maxBytes more bytes or maxMs, whichever comes first.
 */
function lingeringClose(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  if (req.complete) return;
  const { maxBytes, maxMs } = config.bodyDiscard;
  const cutOff = () => res.destroy();
  const timer = setTimeout(cutOff, maxMs).unref();
  let discarded = 0;
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > maxBytes) cutOff();
  };
  const drained = new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      resolve();
    };
    req.once('end', done);
    req.once('close', done);
  });
  req.on('data', onData);
  req.resume();
  // Node closes a `Connection: close` response's socket as soon as the response ends: the answer
  // is written now and its end, which closes the connection, waits for the body.
  const end = res.end.bind(res) as (cb?: () => void) => ServerResponse;
  res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
    if (typeof chunk === 'function') [cb, chunk] = [chunk, undefined];
    if (typeof encoding === 'function') [cb, encoding] = [encoding, undefined];
    if (chunk !== undefined && chunk !== null) res.write(chunk as Buffer, (encoding ?? 'utf8') as BufferEncoding);
    void drained.then(() => {
      if (!res.destroyed) end(cb as (() => void) | undefined);
    });
    return res;
  }) as ServerResponse['end'];
}
