import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  resolveTemporalServerBinaries,
  resolveTemporalUiServerBinary,
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_UI_SERVER_VERSION,
} from '../../tooling/temporalCluster';

// `npm run temporal:server:install` on a fresh machine (docs/operations.md "The cluster tier"):
// with neither binary on PATH nor in the cache, both are built with `go install` and kept in the
// cache under the names the resolver looks for (`go install` names them `server` and `sql`).
// A stand-in `go` on PATH plays the 15-minute build: it records its arguments and writes the
// binary `go install` would.

const FAKE_GO = `#!/bin/sh
echo "$@ CGO_ENABLED=$CGO_ENABLED" >> "$FAKE_GO_LOG"
case "$3" in
  go.temporal.io/server/cmd/server@*) out=server ;;
  go.temporal.io/server/cmd/tools/sql@*) out=sql ;;
  github.com/temporalio/ui-server/v2/cmd/server@*) out=server ;;
  *) echo "unexpected module $3" >&2; exit 1 ;;
esac
printf '#!/bin/sh\\necho %s\\n' "$out" > "$GOBIN/$out"
chmod +x "$GOBIN/$out"
`;

describe('Temporal server install (cluster tier)', () => {
  const saved = {
    PATH: process.env.PATH,
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
    FAKE_GO_LOG: process.env.FAKE_GO_LOG,
    TEMPORAL_UI_SERVER_PATH: process.env.TEMPORAL_UI_SERVER_PATH,
  };
  let dir: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'server-install-'));
    await fs.mkdir(path.join(dir, 'bin'));
    await fs.writeFile(path.join(dir, 'bin', 'go'), FAKE_GO, { mode: 0o755 });
    process.env.PATH = `${path.join(dir, 'bin')}${path.delimiter}${saved.PATH}`;
    process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
    process.env.FAKE_GO_LOG = path.join(dir, 'go.log');
    delete process.env.TEMPORAL_SERVER_PATH;
    delete process.env.TEMPORAL_SQL_TOOL_PATH;
    delete process.env.TEMPORAL_UI_SERVER_PATH;
  });
  afterEach(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('builds both modules at the pinned release into the cache under their own names, then reuses them', async () => {
    const cacheBin = path.join(dir, 'cache', 'content-scheduler', 'bin');
    const first = await resolveTemporalServerBinaries({ log: () => undefined });
    assert.deepEqual(first, { server: path.join(cacheBin, 'temporal-server'), sqlTool: path.join(cacheBin, 'temporal-sql-tool') });
    const calls = (await fs.readFile(process.env.FAKE_GO_LOG!, 'utf8')).trim().split('\n');
    assert.equal(calls.length, 2);
    assert.match(
      calls[0]!,
      new RegExp(`^install -ldflags=-s -w go\\.temporal\\.io/server/cmd/server@${TEMPORAL_SERVER_VERSION} CGO_ENABLED=0$`),
    );
    assert.match(
      calls[1]!,
      new RegExp(`^install -ldflags=-s -w go\\.temporal\\.io/server/cmd/tools/sql@${TEMPORAL_SERVER_VERSION} CGO_ENABLED=0$`),
    );
    // No staging folder or build lock is left beside them.
    assert.deepEqual((await fs.readdir(cacheBin)).sort(), ['temporal-server', 'temporal-sql-tool']);

    assert.deepEqual(await resolveTemporalServerBinaries({ log: () => undefined }), first);
    assert.equal((await fs.readFile(process.env.FAKE_GO_LOG!, 'utf8')).trim().split('\n').length, 2, 'a cache hit builds nothing');
  });

  it('builds the UI server (`npm run temporal:ui:install`) through the same installer: the pinned release, its own name in the cache', async () => {
    const cacheBin = path.join(dir, 'cache', 'content-scheduler', 'bin');
    const ui = await resolveTemporalUiServerBinary({ log: () => undefined });
    assert.equal(ui, path.join(cacheBin, 'temporal-ui-server'));
    const calls = (await fs.readFile(process.env.FAKE_GO_LOG!, 'utf8')).trim().split('\n');
    assert.deepEqual(calls, [
      `install -ldflags=-s -w github.com/temporalio/ui-server/v2/cmd/server@${TEMPORAL_UI_SERVER_VERSION} CGO_ENABLED=0`,
    ]);
    assert.deepEqual(await fs.readdir(cacheBin), ['temporal-ui-server']);
    assert.equal(await resolveTemporalUiServerBinary({ log: () => undefined }), ui, 'a cache hit');
    assert.equal((await fs.readFile(process.env.FAKE_GO_LOG!, 'utf8')).trim().split('\n').length, 1, 'builds nothing the second time');
    process.env.TEMPORAL_UI_SERVER_PATH = path.join(dir, 'nothing-here');
    await assert.rejects(resolveTemporalUiServerBinary(), {
      name: 'BinaryNotFoundError',
      message: /TEMPORAL_UI_SERVER_PATH: .*nothing-here/,
    });
  });

  it('takes an explicit path over everything, and refuses one that is not an executable', async () => {
    process.env.TEMPORAL_SERVER_PATH = path.join(dir, 'bin', 'go');
    process.env.TEMPORAL_SQL_TOOL_PATH = path.join(dir, 'bin', 'go');
    assert.deepEqual(await resolveTemporalServerBinaries(), { server: path.join(dir, 'bin', 'go'), sqlTool: path.join(dir, 'bin', 'go') });
    process.env.TEMPORAL_SERVER_PATH = path.join(dir, 'nothing-here');
    await assert.rejects(resolveTemporalServerBinaries(), {
      name: 'BinaryNotFoundError',
      binary: 'temporal-server',
      message: /TEMPORAL_SERVER_PATH: .*nothing-here does not exist/,
    });
  });
});
