import { z } from 'zod';
import { dateTime } from './output';

// GET /v1/health (liveness, no credential) and /v1/health/auth (the credential's check).

export const healthSchema = z.object({ status: z.literal('ok'), time: dateTime }).strict();

export const healthAuthSchema = z
  .object({
    status: z.literal('ok'),
    workspaceId: z.string(),
    principal: z.object({ type: z.enum(['api_key', 'oauth_token']), id: z.string() }).strict(),
  })
  .strict();
