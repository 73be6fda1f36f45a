import Koa from 'koa';
import { parseBody } from './rest/body';
import { requestContext } from './rest/errors';
import { restRouter } from './rest/routes';

// The API origin: REST under /v1 (and, with the OAuth module, /oauth and /.well-known).
export function createApp(): Koa {
  const app = new Koa({ proxy: process.env.TRUST_PROXY === '1' });
  const router = restRouter();
  app.use(requestContext);
  app.use(parseBody);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
