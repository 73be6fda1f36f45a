// Standalone network simulator for `npm start` and manual runs: the same server the tests start
// in-process, on config.network.simulatorPort. Point NETWORK_API_URL at it to publish locally;
// drive it with `bin/admin network ...` or the control API (docs/network-protocol.md).

import { config } from '../../lib/config';
import { startNetworkSimulator } from './server';

async function main(): Promise<void> {
  let sim;
  try {
    sim = await startNetworkSimulator({ port: config.network.simulatorPort, host: config.network.simulatorHost });
  } catch (err) {
    process.stderr.write(
      `network simulator could not start on ${config.network.simulatorHost}:${config.network.simulatorPort}: ${(err as Error).message}\n`,
    );
    process.exit(1);
  }
  // Supervisors (bin/start, tests) wait for exactly this line.
  process.stdout.write(`network simulator listening on ${sim.url}\n`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    // A hung close must not keep the process from exiting when asked to.
    const force = setTimeout(() => process.exit(0), 5_000);
    force.unref();
    sim.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`network simulator: error while stopping on ${signal}: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
