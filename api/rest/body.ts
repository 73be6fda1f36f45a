import type { Context, Next } from 'koa';
import { ApiError } from '../../lib/errors';
import { readBodyText } from '../body';

// The body parser of the REST and OAuth doors: JSON, or form-encoded for the OAuth
// endpoints (RFC 6749 4.1.3). Anything unreadable is an error in the envelope, never a crash.

const MAX_BODY_BYTES = 2 * 1024 * 1024;

export async function parseBody(ctx: Context, next: Next): Promise<void> {
  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method)) return next();
  const text = await readBodyText(ctx, MAX_BODY_BYTES);
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
