// The cluster tier's binaries (tooling/temporalCluster.ts), found or built with Go into the shared
// cache before anything needs them, so each one-time build is its own visible step:
//
//   npm run temporal:server:install   the Temporal server and its SQL schema tool (about 15
//                                     minutes on two cores; the schema travels inside the tool)
//   npm run temporal:ui:install       (--ui) the Temporal UI server, its web assets built in
//                                     (a few minutes)
//
// --path-only prints the paths, one a line (server, then tool; or the UI server), for shell capture.

import { BinaryNotFoundError } from './serverProcess';
import {
  resolveTemporalServerBinaries,
  resolveTemporalUiServerBinary,
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_UI_SERVER_VERSION,
} from './temporalCluster';

const log = (line: string) => process.stderr.write(`${line}\n`);
const pathOnly = process.argv.includes('--path-only');

try {
  if (process.argv.includes('--ui')) {
    const ui = await resolveTemporalUiServerBinary({ log });
    process.stdout.write(pathOnly ? `${ui}\n` : `temporal UI server ${TEMPORAL_UI_SERVER_VERSION}: ${ui}\n`);
  } else {
    const { server, sqlTool } = await resolveTemporalServerBinaries({ log });
    process.stdout.write(
      pathOnly ? `${server}\n${sqlTool}\n` : `temporal server ${TEMPORAL_SERVER_VERSION}: ${server}\ntemporal-sql-tool: ${sqlTool}\n`,
    );
  }
} catch (err) {
  if (err instanceof BinaryNotFoundError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
