import { healthAuthSchema, healthSchema, healthInput, healthAuthInput } from './schema';
import { single } from '../../output';
import { defineOperation } from '../../operation';

export const health = defineOperation({
  name: 'health.get',
  summary: 'Liveness, unauthenticated.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  public: true,
  input: healthInput,
  output: single(healthSchema),
  handler: async () => ({ data: { status: 'ok' as const, time: new Date().toISOString() } }),
});

export const healthAuth = defineOperation({
  name: 'health.auth',
  summary: 'Authenticated probe: proves the credential works.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  input: healthAuthInput,
  output: single(healthAuthSchema),
  handler: async ({ auth }) => ({
    data: { status: 'ok' as const, workspaceId: auth.workspaceId, principal: { type: auth.principal.type, id: auth.principal.id } },
  }),
});
