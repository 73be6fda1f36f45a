import { closeAuthSubscriber } from '../../api/auth/apiKeys';
import { closeOAuthSubscriber } from '../../api/oauth/tokens';
import { closeDb } from '../../lib/db';
import { closeRedis } from '../../lib/redis';
import { closeWorkflowEnv } from './workflowEnv';

// Shared connections opened by the code under test are closed once, after the whole suite.
export const mochaHooks = {
  async afterAll() {
    closeAuthSubscriber();
    closeOAuthSubscriber();
    await Promise.allSettled([closeDb(), closeRedis(), closeWorkflowEnv()]);
  },
};
