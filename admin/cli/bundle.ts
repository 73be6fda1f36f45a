// The compiled entry of the operator CLI. `bin/admin` is called hundreds of times by scripts,
// so its start-up matters: under tsx every call pays for the loader and for resolving hundreds
// of module files. esbuild bundles bin/admin.ts, with its dependencies, into dist/ (one chunk
// per command module, so a call still loads only its noun); the wrapper runs that with plain
// node and rebuilds it when a source file is newer (bin/admin; ADMIN_CLI_BUNDLE=0 opts out).
//
// The chunks sit directly in dist/, one level below the repository root like lib/, so the one
// module that locates files through import.meta.url (lib/db.ts: ../migrations) still finds
// them. Migrations are TypeScript: admin/cli/runtime.ts registers tsx only when one is pending.
//
//   node --import tsx admin/cli/bundle.ts        # build (what bin/admin does when stale)

import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const DIST = path.join(ROOT, 'dist');
export const ENTRY = path.join(DIST, 'admin-cli.mjs');

// Native, optional or never-used drivers knex and pg reference; Temporal's packages carry
// native code and large generated tables better left to node_modules; tsx is loaded on demand.
const EXTERNAL = [
  'pg-native',
  'mysql',
  'mysql2',
  'sqlite3',
  'better-sqlite3',
  'tedious',
  'oracledb',
  'pg-query-stream',
  'mariadb',
  '@temporalio/*',
  'tsx',
  'tsx/*',
];

export async function buildAdminCli(): Promise<string> {
  // Built beside, then renamed into place file by file: chunks are content-hashed, so a call
  // running meanwhile sees either the old entry or the new one, each with its own chunks.
  const tmp = path.join(DIST, `.build-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await build({
      entryPoints: [path.join(ROOT, 'bin', 'admin.ts')],
      outdir: tmp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      entryNames: 'admin-cli',
      chunkNames: 'admin-cli-[hash]',
      outExtension: { '.js': '.mjs' },
      external: EXTERNAL,
      // CommonJS dependencies call require(); an ES module has none of its own.
      banner: {
        js: "import { createRequire as __adminCliRequire } from 'node:module'; const require = __adminCliRequire(import.meta.url);",
      },
      define: { 'process.env.ADMIN_CLI_BUNDLED': '"1"' },
      logLevel: 'error',
    });
    const files = await fs.readdir(tmp);
    for (const f of files.filter((f) => f !== 'admin-cli.mjs')) await fs.rename(path.join(tmp, f), path.join(DIST, f));
    await fs.rename(path.join(tmp, 'admin-cli.mjs'), ENTRY);
    // Chunks of earlier builds: kept for a while, as a call started before this build may
    // still import one, then removed.
    const current = new Set(files);
    for (const f of await fs.readdir(DIST)) {
      if (!/^admin-cli-.*\.mjs$/.test(f) || current.has(f)) continue;
      const stat = await fs.stat(path.join(DIST, f)).catch(() => null);
      if (stat && Date.now() - stat.mtimeMs > 10 * 60_000) await fs.rm(path.join(DIST, f), { force: true });
    }
    return ENTRY;
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await fs.mkdir(DIST, { recursive: true });
  try {
    await buildAdminCli();
  } catch (err) {
    process.stderr.write(
      `bin/admin: could not build ${path.relative(process.cwd(), ENTRY)} (${(err as Error).message.split('\n')[0]}); running through tsx\n`,
    );
    process.exit(1);
  }
}
