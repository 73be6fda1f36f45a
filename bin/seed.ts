// `npm run seed`: demo data for trying the API locally (admin/seed.ts, the same provisioning
// code as bin/admin). Running it again reuses the "Demo Workspace", its projects and the demo
// user (restoring what a previous session may have changed: plan, company-page link, password,
// role) and issues one more key, because a key's plaintext cannot be shown a second time.
import { closeServices, describeError, exitSoon, openServices } from '../admin/cli/runtime';
import { seedDemoWorkspace } from '../admin/seed';
import { serviceAddresses } from '../lib/config';
import { createSimulatorControl } from '../sim/network/control';

async function main() {
  await openServices();
  console.log(await seedDemoWorkspace(createSimulatorControl(serviceAddresses().network.address, { timeoutMs: 1_000 })));
}

main()
  .catch((err) => {
    process.stderr.write(`seed: ${describeError(err)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await closeServices();
    exitSoon();
  });
