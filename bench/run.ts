// `npm run bench [-- <name>...] [options]`: runs every bench/<name>.ts (or those named), each in
// a fresh Node process, one after another, passing the options on; `-- --list` lists them.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const benchDir = import.meta.dirname;
const available = fs
  .readdirSync(benchDir)
  .flatMap((f) => (/^[\w-]+\.ts$/.test(f) && f !== 'run.ts' ? [f.slice(0, -3)] : []))
  .sort();

const args = process.argv.slice(2);
if (args.includes('--list')) {
  console.log(available.join('\n'));
  process.exit(0);
}
const firstOption = args.findIndex((a) => a.startsWith('-'));
const names = firstOption === -1 ? args : args.slice(0, firstOption);
const unknown = names.filter((n) => !available.includes(n));
if (unknown.length) {
  console.error(`unknown bench: ${unknown.join(', ')}; available: ${available.join(', ') || '(none)'}`);
  process.exit(2);
}
const selected = names.length ? names : available;

// Ctrl-C reaches the child through the terminal's process group; this process waits for it.
process.on('SIGINT', () => undefined);
let failed = false;
for (const name of selected) {
  if (selected.length > 1) console.log(`\n=== ${name} ===`);
  // tsx as an import hook in a plain node process, so the bench's own pid is the load generator's.
  const argv = ['--import', 'tsx', path.join(benchDir, `${name}.ts`), ...args.slice(names.length)];
  const r = spawnSync(process.execPath, argv, { cwd: path.dirname(benchDir), stdio: 'inherit' });
  const code = r.status ?? (r.signal ? 128 : 1);
  if (code !== 0) console.error(`bench ${name} exited with code ${code}`);
  failed ||= code !== 0;
}
process.exit(failed ? 1 : 0);
