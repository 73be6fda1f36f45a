import { createApp } from '../../api/app';
import { closeAuthSubscriber } from '../../api/auth/apiKeys';
import { createDoorServer } from '../../api/listen';
import { closeDb } from '../../lib/db';
import { closeRedis } from '../../lib/redis';
import { serveUnderParent } from './serverChild';

// The real API of the benches as api/main.ts builds it (api/listen.ts): its REST door, or with
// BENCH_DOOR=mcp its MCP door (spec 4.9); `stages` and `statements` are the benches' calls into it.

const mcp = process.env.BENCH_DOOR === 'mcp' ? await import('../../api/mcp/app') : null;
const server = mcp ? createDoorServer(mcp.createMcpApp(), 'mcp') : createDoorServer(createApp(), 'rest');
serveUnderParent(server, {
  onStop: async () => {
    await mcp?.closeMcp();
    closeAuthSubscriber();
    await Promise.allSettled([closeDb(), closeRedis()]);
  },
  calls: {
    stages: async (args) => (await import('./stages')).timeStages(args as never),
    statements: async (args) => (await import('./statements')).captureRequest(server, args as never),
  },
});
