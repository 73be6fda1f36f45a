// `npm run s3:install`: make the embedded object store's binary (the Versity S3 gateway)
// available before anything needs it, so the one-time Go build is its own visible step (CI,
// first setup) rather than inside a test timeout or the first `npm start`.
//
// --path-only prints just the path on stdout (progress goes to stderr), for shell capture:
//   export S3_SERVER_PATH="$(npm run --silent s3:install -- --path-only)"

import { resolveS3ServerBinary } from './objectStoreServer';
import { BinaryNotFoundError } from './serverProcess';

try {
  const binary = await resolveS3ServerBinary({ log: (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(process.argv.includes('--path-only') ? `${binary}\n` : `versitygw: ${binary}\n`);
} catch (err) {
  if (err instanceof BinaryNotFoundError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
