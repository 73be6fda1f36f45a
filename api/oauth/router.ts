import Router, { type RouterMiddleware } from '@koa/router';
import type { Context, Next } from 'koa';
import { authorizeEndpoint } from './actions/authorize';
import { serveAuthorizationServerMetadata, serveRestResourceMetadata } from './actions/discovery';
import { confirmAction, loginAction, logoutAction, showInteraction } from './actions/interaction';
import { introspectEndpoint } from './actions/introspect';
import { registerEndpoint } from './actions/register';
import { revokeEndpoint } from './actions/revoke';
import { tokenEndpoint } from './actions/token';
import { allowAnyOrigin, corsPreflight, noStore } from './http';

// The authorization server on the API origin (spec 5.3). Each line shows an endpoint's chain.

type Step = (ctx: Context, next: Next) => unknown;

export function oauthRouter(): Router {
  const r = new Router();
  const get = (path: string, ...steps: Step[]) => r.get(path, ...(steps as unknown as RouterMiddleware[]));
  const post = (path: string, ...steps: Step[]) => r.post(path, ...(steps as unknown as RouterMiddleware[]));

  get('/.well-known/oauth-authorization-server', allowAnyOrigin, serveAuthorizationServerMetadata);
  get('/.well-known/oauth-protected-resource', allowAnyOrigin, serveRestResourceMetadata);

  post('/oauth/register', allowAnyOrigin, noStore, ...registerEndpoint);
  get('/oauth/authorize', ...authorizeEndpoint);
  get('/oauth/interaction/:uid', ...showInteraction);
  post('/oauth/interaction/:uid/login', ...loginAction);
  post('/oauth/interaction/:uid/logout', ...logoutAction);
  post('/oauth/interaction/:uid/confirm', ...confirmAction);
  post('/oauth/token', allowAnyOrigin, noStore, ...tokenEndpoint);
  post('/oauth/introspect', allowAnyOrigin, noStore, ...introspectEndpoint);
  post('/oauth/revoke', allowAnyOrigin, noStore, ...revokeEndpoint);

  r.options(
    [
      '/oauth/register',
      '/oauth/token',
      '/oauth/introspect',
      '/oauth/revoke',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
    ],
    corsPreflight as unknown as RouterMiddleware,
  );
  return r;
}

export { registerOAuthPrincipals } from './principal';
export { protectedResourceMetadata, authorizationServerMetadata, bearerChallenge } from './metadata';
