import { client, startApi, type TestServer } from './app';
import { workspaceWithKey } from './factories';
import { simulator } from './network';
import { testWorker } from './worker';

export interface ApiAndWorker {
  api: TestServer;
  /** A fresh workspace without projects (each test connects the projects it needs). */
  ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  /** The REST client of `ws`'s API key. */
  call: ReturnType<typeof client>;
}

/**
 * The mocha hooks of a suite that publishes end to end in this process: the REST API, a worker
 * on the run's Temporal dev server, a workspace and its client; simulator faults and latency
 * are cleared after each test. The fields are set once the suite's `before` has run.
 */
export function apiAndWorker(): ApiAndWorker {
  const stack = {} as ApiAndWorker;
  const sim = simulator();
  const worker = testWorker();
  before(async () => {
    stack.api = await startApi();
    await worker.start();
    stack.ws = await workspaceWithKey({ projects: 0 });
    stack.call = client(stack.api.url, stack.ws.key);
  });
  afterEach(async () => {
    await sim.clearFaults();
    await sim.setLatency({ ms: 0 });
  });
  after(async () => {
    await worker.stop();
    await stack.api.close();
  });
  return stack;
}
