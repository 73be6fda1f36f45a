import Router from '@koa/router';
import type { Context } from 'koa';
import { resolveVersion } from '../versioning';
import { openApiJson } from './document';

// GET /v1/openapi.json: the contract, unauthenticated and cacheable by anyone (it holds no
// workspace data). Service-Api-Version picks the version it describes (spec 9); the answer
// varies on that header and revalidates with its ETag.
export function openApiRouter(): Router {
  const r = new Router();
  r.get('/v1/openapi.json', (ctx: Context) => {
    ctx.state.handled = true;
    const version = resolveVersion(ctx.get('service-api-version') || undefined);
    const { body, etag } = openApiJson(version);
    ctx.set('Service-Api-Version', version);
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Vary', 'Service-Api-Version');
    ctx.set('ETag', etag);
    ctx.set('Access-Control-Allow-Origin', '*');
    if (ctx.get('if-none-match') === etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json';
    ctx.body = body;
  });
  return r;
}
