// `npm run temporal:server:install`: the cluster tier's binaries (tooling/temporalCluster.ts),
// the Temporal server and its SQL schema tool, found or built with Go into the shared cache
// before anything needs them, so the one-time build (about 15 minutes on two cores) is its own
// visible step. The schema travels inside the tool, so nothing else is downloaded.
//
// --path-only prints the two paths, one a line (server, then tool), for shell capture.

import { BinaryNotFoundError } from '../tooling/serverProcess';
import { resolveTemporalServerBinaries, TEMPORAL_SERVER_VERSION } from '../tooling/temporalCluster';

try {
  const { server, sqlTool } = await resolveTemporalServerBinaries({ log: (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(
    process.argv.includes('--path-only')
      ? `${server}\n${sqlTool}\n`
      : `temporal server ${TEMPORAL_SERVER_VERSION}: ${server}\ntemporal-sql-tool: ${sqlTool}\n`,
  );
} catch (err) {
  if (err instanceof BinaryNotFoundError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
