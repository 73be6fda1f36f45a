import type { Context, Next } from 'koa';
import { ApiError, errors } from '../../lib/errors';

// The one body parser of the REST and OAuth doors: JSON, or form-encoded for the OAuth
// endpoints (RFC 6749 4.1.3). Anything unreadable is an error in the envelope, never a crash.

const MAX_BODY_BYTES = 2 * 1024 * 1024;

async function readRaw(ctx: Context): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > MAX_BODY_BYTES) throw errors.payloadTooLarge(`The request body is larger than ${MAX_BODY_BYTES} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw errors.payloadTooLarge(`The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function parseBody(ctx: Context, next: Next): Promise<void> {
  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method)) return next();
  const raw = await readRaw(ctx);
  const text = raw.toString('utf8');
  ctx.state.rawBody = text;
  if (text.trim() === '') {
    ctx.state.body = undefined;
    return next();
  }
  if (ctx.is('application/x-www-form-urlencoded')) {
    ctx.state.body = Object.fromEntries(new URLSearchParams(text));
    return next();
  }
  try {
    ctx.state.body = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_request', 'The request body is not valid JSON.');
  }
  return next();
}
