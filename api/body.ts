import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { errors } from '../lib/errors';

// The one body reader of every door (REST, OAuth, MCP), on raw-body: a declared
// Content-Length over the limit is refused before a byte is read, a streamed body is cut off
// at the limit, and both answer 413 payload_too_large in the door's envelope.

/** The body as text ('' when there is none). */
export async function readBodyText(ctx: Context, limit: number, what = 'request body'): Promise<string> {
  const declared = ctx.get('content-length');
  try {
    const raw = await getRawBody(ctx.req, { limit, length: declared === '' ? undefined : declared });
    return raw.toString('utf8');
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw errors.payloadTooLarge(`The ${what} is larger than ${limit} bytes.`);
    if (type === 'request.size.invalid') throw errors.invalidRequest('The request body does not match its Content-Length.');
    // A client that went away: the error boundaries answer nothing to it (499).
    if (type === 'request.aborted') throw Object.assign(new Error('request aborted'), { code: 'ECONNRESET' });
    throw err;
  }
}
