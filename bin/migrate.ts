// `npm run migrate`: bring the database named by DATABASE_URL to the latest schema. The
// database itself is created when missing, and Redis is checked too, so that a machine that
// passes this step can also run the API (both are needed there).
import { config } from '../lib/config';
import { db } from '../lib/db';
import { maskUrl } from '../lib/preflight';
import { closeServices, describeError, exitSoon, openServices } from '../admin/cli/runtime';

async function main() {
  const applied = await openServices();
  const where = maskUrl(config.databaseUrl);
  if (applied.length) {
    console.log(`Applied ${applied.length} migration(s) to ${where}:`);
    for (const name of applied) console.log(`  ${name}`);
  } else {
    const current = await db().migrate.currentVersion();
    console.log(`${where} is up to date (latest migration ${current}); nothing to apply.`);
  }
}

main()
  .catch((err) => {
    process.stderr.write(`migrate: ${describeError(err)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await closeServices();
    exitSoon();
  });
