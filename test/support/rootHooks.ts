import { closeAuthSubscriber } from '../../api/auth/apiKeys';
import { closeDb } from '../../lib/db';
import { closeRedis } from '../../lib/redis';
import { closeWorkflowEnv } from './workflowEnv';

// Shared connections opened by the code under test are closed once, after the whole suite.
export const mochaHooks = {
  async afterAll() {
    closeAuthSubscriber();
    await Promise.allSettled([closeDb(), closeRedis(), closeWorkflowEnv()]);
  },
};
