import { createApp } from '../../api/app';
import { createDoorServer } from '../../api/listen';
import { closeAuthSubscriber } from '../../api/auth/apiKeys';
import { closeDb } from '../../lib/db';
import { closeRedis } from '../../lib/redis';
import { serveUnderParent } from './serverChild';

// The real API of the benches, as api/main.ts builds it (api/listen.ts), in the environment the
// parent gave it; `stages` and `statements` are the benches' calls into it.

const server = createDoorServer(createApp(), 'rest');
serveUnderParent(server, {
  onStop: async () => {
    closeAuthSubscriber();
    await Promise.allSettled([closeDb(), closeRedis()]);
  },
  calls: {
    stages: async (args) => (await import('./stages')).timeStages(args as never),
    statements: async (args) => (await import('./statements')).captureRequest(server, args as never),
  },
});
