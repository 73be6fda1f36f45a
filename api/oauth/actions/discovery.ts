import type { Context } from 'koa';
import { config } from '../../../lib/config';
import { authorizationServerMetadata, protectedResourceMetadata } from '../metadata';

// spec 5.3: discovery is unauthenticated and cacheable.
const CACHE = 'public, max-age=3600';

export async function serveAuthorizationServerMetadata(ctx: Context): Promise<void> {
  ctx.set('Cache-Control', CACHE);
  ctx.body = authorizationServerMetadata();
}

/** RFC 9728 3 for the REST resource (config.publicUrl). */
export async function serveRestResourceMetadata(ctx: Context): Promise<void> {
  ctx.set('Cache-Control', CACHE);
  ctx.body = protectedResourceMetadata(config.publicUrl);
}
