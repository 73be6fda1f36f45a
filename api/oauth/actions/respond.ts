import type { Context, Next } from 'koa';
import { ApiError } from '../../../lib/errors';
import { log } from '../../../lib/logger';
import { AuthorizationPageError, OAuthError } from '../errors';
import { oauthState } from '../http';
import { issuer } from '../metadata';
import { errorPage } from '../pages';

// The boundary of the browser leg (habit 3): errors become either an HTML page or an RFC 6749
// 4.1.2.1 redirect, decided in one place.

/**
 * Redirects to the client with RFC 6749 parameters plus `iss` (RFC 9207: on every
 * authorization response, success or error, so a client can tell mix-up attacks apart).
 */
export function redirectToClient(ctx: Context, redirectUri: string, params: Record<string, string | null | undefined>): void {
  const target = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) target.searchParams.set(k, v);
  target.searchParams.set('iss', issuer());
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.status = 303;
  ctx.redirect(target.href);
}

export function redirectError(ctx: Context, redirect: { uri: string; state: string | null }, err: OAuthError): void {
  redirectToClient(ctx, redirect.uri, { error: err.oauthName, error_description: err.message, state: redirect.state });
}

/**
 * Before client_id and redirect_uri are validated nothing may redirect (RFC 6749 4.1.2.1:
 * "MUST NOT automatically redirect the user-agent to the invalid redirection URI"); after,
 * OAuth errors go back to the client and anything else is shown as a page.
 */
export async function browserErrors(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } catch (err) {
    const redirect = oauthState(ctx).redirect;
    if (err instanceof OAuthError && redirect) return redirectError(ctx, redirect, err);
    if (err instanceof AuthorizationPageError) return errorPage(ctx, err.title, err.message, err.oauthName);
    if (err instanceof ApiError && err.status < 500)
      return errorPage(ctx, 'This request cannot be completed', err.message, err instanceof OAuthError ? err.oauthName : null);
    log.error('authorization page failed', { requestId: ctx.state.requestId, path: ctx.path, err });
    errorPage(ctx, 'Something went wrong', `Please try again. If it keeps happening, quote ${ctx.state.requestId} to support.`);
    ctx.status = 500;
  }
}
