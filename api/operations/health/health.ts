import { z } from 'zod';
import { defineOperation } from '../../operation';

export const health = defineOperation({
  name: 'health.get',
  summary: 'Liveness, unauthenticated.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  inputSource: 'query',
  public: true,
  input: z.object({}),
  handler: async () => ({ data: { status: 'ok', time: new Date().toISOString() } }),
});

export const healthAuth = defineOperation({
  name: 'health.auth',
  summary: 'Authenticated probe: proves the credential works.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  inputSource: 'query',
  input: z.object({}).strict(),
  handler: async ({ auth }) => ({
    data: { status: 'ok', workspaceId: auth.workspaceId, principal: { type: auth.principal.type, id: auth.principal.id } },
  }),
});
