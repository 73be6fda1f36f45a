import Router, { type RouterMiddleware } from '@koa/router';
import type { Context, Next } from 'koa';
import { authorizeEndpoint } from './actions/authorize';
import { authorizationServerMetadataEndpoint, restResourceMetadataEndpoint } from './actions/discovery';
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

  get('/.well-known/oauth-authorization-server', ...authorizationServerMetadataEndpoint.steps);
  get('/.well-known/oauth-protected-resource', ...restResourceMetadataEndpoint.steps);

  post('/oauth/register', allowAnyOrigin, noStore, ...registerEndpoint.steps);
  get('/oauth/authorize', ...authorizeEndpoint);
  get('/oauth/interaction/:uid', ...showInteraction);
  post('/oauth/interaction/:uid/login', ...loginAction);
  post('/oauth/interaction/:uid/logout', ...logoutAction);
  post('/oauth/interaction/:uid/confirm', ...confirmAction);
  post('/oauth/token', allowAnyOrigin, noStore, ...tokenEndpoint.steps);
  post('/oauth/introspect', allowAnyOrigin, noStore, ...introspectEndpoint.steps);
  post('/oauth/revoke', allowAnyOrigin, noStore, ...revokeEndpoint.steps);

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
