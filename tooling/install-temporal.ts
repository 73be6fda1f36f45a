// `npm run temporal:install`: make the `temporal` CLI available before anything needs it, so the
// one-time build happens as its own visible step (CI, first setup) rather than inside a test
// timeout or the first `npm start`.
//
// --path-only prints just the path on stdout (progress goes to stderr), for shell capture:
//   export TEMPORAL_CLI_PATH="$(npm run --silent temporal:install -- --path-only)"

import { BinaryNotFoundError } from './serverProcess';
import { resolveTemporalBinary, temporalVersion } from './temporalBinary';

const pathOnly = process.argv.includes('--path-only');

try {
  const binary = await resolveTemporalBinary({ log: (line) => process.stderr.write(`${line}\n`) });
  if (pathOnly) {
    process.stdout.write(`${binary}\n`);
  } else {
    process.stdout.write(`temporal CLI: ${binary}\n${await temporalVersion(binary)}\n`);
  }
} catch (err) {
  if (err instanceof BinaryNotFoundError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
