import type { Context } from 'koa';
import { allowAnyOrigin, type OAuthEndpoint } from '../http';
import { authorizationServerMetadata, protectedResourceMetadata } from '../metadata';
import { restResource } from '../resources';
import { authorizationServerMetadataSchema, protectedResourceMetadataSchema } from '../schema';

// spec 5.3: discovery is unauthenticated and cacheable.
const CACHE = 'public, max-age=3600';

async function serveAuthorizationServerMetadata(ctx: Context): Promise<void> {
  ctx.set('Cache-Control', CACHE);
  ctx.body = authorizationServerMetadata();
}

/**
 * RFC 9728 3 for the REST resource (config.publicUrl). `resource` is the identifier the
 * authorization server binds tokens to (RFC 8707), so a client that sends it back verbatim
 * gets a REST token.
 */
async function serveRestResourceMetadata(ctx: Context): Promise<void> {
  ctx.set('Cache-Control', CACHE);
  ctx.body = protectedResourceMetadata(restResource());
}

export const authorizationServerMetadataEndpoint: OAuthEndpoint = {
  steps: [allowAnyOrigin, serveAuthorizationServerMetadata],
  response: authorizationServerMetadataSchema,
  errors: [],
};

export const restResourceMetadataEndpoint: OAuthEndpoint = {
  steps: [allowAnyOrigin, serveRestResourceMetadata],
  response: protectedResourceMetadataSchema,
  errors: [],
};
