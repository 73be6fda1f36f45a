import Koa from 'koa';
import { config } from '../lib/config';
import { createApiDeps, type ApiDeps } from './deps';
import { readinessRouter } from './health/ready';
import { docsRouter } from './openapi/docs';
import { openApiRouter } from './openapi/router';
import { oauthRouter, registerOAuthPrincipals } from './oauth/router';
import { parseBody } from './rest/bodyParser';
import { requestContext } from './rest/errors';
import { restRouter } from './rest/routes';
import { tracingMiddleware } from './tracing';
import { tracingActive } from '../lib/telemetry';

// The API origin: REST under /v1 (and, with the OAuth module, /oauth and /.well-known). `deps`
// (the network client) are built here once unless the caller shares its own; the REST door hands
// them to every operation (ctx.deps).
export function createApp(deps: ApiDeps = createApiDeps()): Koa {
  const app = new Koa({ proxy: config.trustProxy });
  app.context.deps = deps;
  const router = restRouter();
  // The request's trace span, outermost (api/tracing.ts); only when tracing is on.
  if (tracingActive()) app.use(tracingMiddleware('rest'));
  app.use(requestContext);
  app.use(parseBody);
  app.use(router.routes());
  app.use(router.allowedMethods());
  // The published contract (api/openapi): generated from the route table above.
  const contract = openApiRouter();
  app.use(contract.routes());
  app.use(contract.allowedMethods());
  const docs = docsRouter();
  app.use(docs.routes());
  app.use(readinessRouter().routes());
  // spec 5.3: the authorization server shares the API origin; its tokens are REST principals.
  registerOAuthPrincipals();
  const oauth = oauthRouter();
  app.use(oauth.routes());
  app.use(oauth.allowedMethods());
  return app;
}
