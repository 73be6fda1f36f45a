// `npm run bench [-- <name>...] [options]`: runs every bench/<name>.ts (or those named), each in
// a fresh Node process, one after another, passing the options on; `-- --list` lists them.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const benchDir = import.meta.dirname;
const available = fs
  .readdirSync(benchDir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && f !== 'run.ts')
  .map((f) => f.slice(0, -3))
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

// Ctrl-C reaches the child through the terminal's process group; just wait for it.
process.on('SIGINT', () => undefined);
let failed = 0;
for (const name of selected) {
  if (selected.length > 1) console.log(`\n=== ${name} ===`);
  // tsx as an import hook in a plain node process, so the bench's own pid is the load generator's.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(benchDir, `${name}.ts`), ...args.slice(names.length)], {
    cwd: path.resolve(benchDir, '..'),
    stdio: 'inherit',
  });
  const code = await new Promise<number>((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 128 : 1))));
  if (code !== 0) {
    failed++;
    console.error(`bench ${name} exited with code ${code}`);
  }
}
process.exit(failed ? 1 : 0);
