import { createApp } from '../../api/app';
import { createDoorServer } from '../../api/listen';
import { closeAuthSubscriber } from '../../api/auth/apiKeys';
import { closeDb } from '../../lib/db';
import { closeRedis } from '../../lib/redis';
import { serveUnderParent } from './serverChild';

// Server (a) of the posts-list bench: the real API exactly as api/main.ts builds it — same
// listener set-up (api/listen.ts), middleware, router, auth, rate limiter, knex pool and Redis
// client. The parent has set DATABASE_URL, REDIS_URL and RATE_LIMIT_READ in this process's
// environment before forking, so lib/config reads the bench values at import.

const server = createDoorServer(createApp(), 'rest');
serveUnderParent(server, {
  onStop: async () => {
    closeAuthSubscriber();
    await Promise.allSettled([closeDb(), closeRedis()]);
  },
  calls: {
    // Loaded on demand so the stage timings' code is not even imported in a plain run.
    stages: async (args) => (await import('./stages')).timeStages(args as never),
    // The statements one request sends Postgres, for the benches' same-statements baseline.
    statements: async (args) => (await import('./statements')).captureRequest(server, args as never),
  },
});
