import { createNetworkClient, type NetworkClient } from '../lib/network/client';
import { objectStore, type ObjectStore } from '../lib/storage/objectStore';

// What the API's operations use from the outside world, built once per process by the app
// factories (api/app.ts, api/mcp/app.ts; api/main.ts shares one set between both) and handed
// to every operation in its context, the way workers/ hands activities theirs
// (activities/index.ts ActivityDeps). Tests pass their own (a client with other timeouts, a
// simulator in another process) without touching module state.
export interface ApiDeps {
  /** The social network (lib/network/client.ts): PATCH scheduling verifies connections, the viral search asks it. */
  network: NetworkClient;
  /** The object store (lib/storage/objectStore.ts): uploads' presigned PUTs, imports' bytes. */
  objectStore: ObjectStore;
}

declare module 'koa' {
  interface DefaultContext {
    /** Set once on app.context by createApp / createMcpApp. */
    deps?: ApiDeps;
  }
}

export function createApiDeps(overrides: Partial<ApiDeps> = {}): ApiDeps {
  return { network: overrides.network ?? createNetworkClient(), objectStore: overrides.objectStore ?? objectStore() };
}
