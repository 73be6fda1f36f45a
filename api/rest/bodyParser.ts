import type { Context, Next } from 'koa';
import { ApiError } from '../../lib/errors';
import { readBodyText } from '../rawBody';

// The body parser of the REST and OAuth doors: JSON, or form-encoded for the OAuth
// endpoints (RFC 6749 4.1.3). Anything unreadable is an error in the envelope, never a crash.

const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * A route's own body limit (route() option `body`). `bare`: a larger body is answered with a
 * bare HTTP 413 (no JSON envelope) before anything is parsed, as spec 4.7 says of the inline
 * image import ("rejected at the platform edge").
 */
export interface BodyLimit {
  maxBytes: number;
  tooLarge: 'bare' | 'envelope';
}

const routeLimits = new Map<string, BodyLimit>();

/** Registers a limit for one literal path (no parameters) and method. */
export function setRouteBodyLimit(method: string, path: string, limit: BodyLimit): void {
  if (path.includes(':')) throw new Error(`per-route body limits take literal paths, not ${path}`);
  routeLimits.set(`${method.toUpperCase()} ${path}`, limit);
}

export async function parseBody(ctx: Context, next: Next): Promise<void> {
  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method)) return next();
  const limit = routeLimits.get(`${ctx.method} ${ctx.path}`);
  let text: string;
  try {
    text = await readBodyText(ctx, limit?.maxBytes ?? MAX_BODY_BYTES);
  } catch (err) {
    if (!(limit?.tooLarge === 'bare' && err instanceof ApiError && err.status === 413)) throw err;
    // readBodyText has set up the lingering close (Connection: close) this answer is sent with.
    ctx.status = 413;
    ctx.body = 'Request Entity Too Large';
    ctx.type = 'text/plain';
    return;
  }
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
    throw new ApiError('invalid_request', 'The request body is not valid JSON.');
  }
  return next();
}
