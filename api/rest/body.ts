import type { Context, Next } from 'koa';
import { ApiError, errors } from '../../lib/errors';

// The one body parser of the REST and OAuth doors: JSON, or form-encoded for the OAuth
// endpoints (RFC 6749 4.1.3). Anything unreadable is an error in the envelope, never a crash.

const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * A route's own body limit (route() option `body`). `bare`: a larger body is answered with a
 * bare HTTP 413 (no JSON envelope) before anything is parsed, as spec 4.7 says of the inline
 * image import ("rejected at the platform edge").
 */
export interface BodyLimit { maxBytes: number; tooLarge: 'bare' | 'envelope' }

const routeLimits = new Map<string, BodyLimit>();

/** Registers a limit for one literal path (no parameters) and method. */
export function setRouteBodyLimit(method: string, path: string, limit: BodyLimit): void {
  if (path.includes(':')) throw new Error(`per-route body limits take literal paths, not ${path}`);
  routeLimits.set(`${method.toUpperCase()} ${path}`, limit);
}

class BareTooLarge extends Error {}

async function readRaw(ctx: Context, limit: BodyLimit): Promise<Buffer> {
  const max = limit.maxBytes;
  const tooLarge = () => (limit.tooLarge === 'bare' ? new BareTooLarge() : errors.payloadTooLarge(`The request body is larger than ${max} bytes.`));
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > max) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > max) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function parseBody(ctx: Context, next: Next): Promise<void> {
  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method)) return next();
  const limit = routeLimits.get(`${ctx.method} ${ctx.path}`) ?? { maxBytes: MAX_BODY_BYTES, tooLarge: 'envelope' };
  let raw: Buffer;
  try {
    raw = await readRaw(ctx, limit);
  } catch (err) {
    if (!(err instanceof BareTooLarge)) throw err;
    // The rest of the body is not read: the connection closes after this answer.
    ctx.status = 413;
    ctx.set('Connection', 'close');
    ctx.body = 'Request Entity Too Large';
    ctx.type = 'text/plain';
    return;
  }
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
