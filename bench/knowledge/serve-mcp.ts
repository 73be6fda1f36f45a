import { closeAuthSubscriber } from '../../api/auth/apiKeys';
import { createDoorServer } from '../../api/listen';
import { closeMcp, createMcpApp } from '../../api/mcp/app';
import { closeDb } from '../../lib/db';
import { closeRedis } from '../../lib/redis';
import { serveUnderParent } from '../harness/serverChild';
import { captureRequest } from '../harness/statements';

// The API's MCP door ({mcp_url}, spec 4.9) as a bench server: createMcpApp on the listener every
// door gets (api/listen.ts), with the same `statements` call as serve-app.ts, so a tool call's
// statements are captured inside the process that runs them.

const server = createDoorServer(createMcpApp(), 'mcp');
serveUnderParent(server, {
  onStop: async () => {
    await closeMcp();
    closeAuthSubscriber();
    await Promise.allSettled([closeDb(), closeRedis()]);
  },
  calls: { statements: (args) => captureRequest(server, args as never) },
});
