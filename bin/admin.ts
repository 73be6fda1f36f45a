// Operator CLI: `bin/admin <noun> <verb> [--flag value ...]` (or `npm run admin -- ...`).
// Commands live in bin/admin.d/commands/<noun>.ts and register themselves; see
// bin/admin.d/registry.ts. Successful commands print JSON on stdout, failures one line on
// stderr: exit 2 when the command line is wrong, 1 when the operation failed.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { findNoun, mainUsage, nounNames, nounUsage, parseVerbArgs, PROGRAM, UsageError, verbUsage } from './admin.d/registry';

// The shared logger writes info lines to stdout, which would corrupt the JSON a script reads.
// Set before the configuration is first imported (every lib import below is dynamic).
process.env.LOG_LEVEL ||= 'warn';

const COMMANDS_DIR = path.join(import.meta.dirname, 'admin.d', 'commands');
const HELP = new Set(['help', '--help', '-h']);

/** Imports every command module. A broken module must not take the other nouns down with it. */
async function loadCommands(): Promise<Array<{ file: string; error: unknown }>> {
  const failures: Array<{ file: string; error: unknown }> = [];
  const files = fs.readdirSync(COMMANDS_DIR)
    .filter((f) => /\.(ts|mts|js|mjs)$/.test(f) && !/\.d\.[mc]?ts$/.test(f) && !/\.test\./.test(f))
    .sort();
  for (const file of files) {
    try {
      await import(pathToFileURL(path.join(COMMANDS_DIR, file)).href);
    } catch (error) {
      failures.push({ file: path.relative(process.cwd(), path.join(COMMANDS_DIR, file)), error });
    }
  }
  return failures;
}

function fail(message: string, code: 1 | 2): void {
  process.stderr.write(`${PROGRAM}: ${message}\n`);
  process.exitCode = code;
}

async function main(argv: string[]): Promise<void> {
  const failures = await loadCommands();
  const loadProblem = () => failures.map((f) => `could not load ${f.file}: ${(f.error as Error)?.message ?? f.error}`).join('; ');
  const warnLoad = () => { if (failures.length) process.stderr.write(`${PROGRAM}: warning: ${loadProblem()}\n`); };
  const [noun, verbName, ...rest] = argv;

  if (noun === undefined) {
    warnLoad();
    process.stderr.write(`${mainUsage()}\n`);
    process.exitCode = 2;
    return;
  }
  if (HELP.has(noun)) {
    warnLoad();
    if (verbName && !HELP.has(verbName)) {
      if (!findNoun(verbName)) return fail(`unknown command "${verbName}"; one of ${nounNames().join(', ')}`, 2);
      process.stdout.write(`${nounUsage(verbName)}\n`);
    } else {
      process.stdout.write(`${mainUsage()}\n`);
    }
    return;
  }

  const entry = findNoun(noun);
  if (!entry) {
    // A noun whose module failed to load looks unknown; say why instead.
    if (failures.length) return fail(`unknown command "${noun}" (${loadProblem()})`, 1);
    return fail(`unknown command "${noun}"; one of ${nounNames().join(', ')}. Run "${PROGRAM} help".`, 2);
  }
  warnLoad();

  if (verbName === undefined) {
    process.stderr.write(`${nounUsage(noun)}\n`);
    process.exitCode = 2;
    return;
  }
  if (HELP.has(verbName)) {
    process.stdout.write(`${nounUsage(noun)}\n`);
    return;
  }
  const verb = entry.verbs.get(verbName);
  if (!verb) return fail(`unknown command "${noun} ${verbName}"; ${noun} verbs: ${[...entry.verbs.keys()].join(', ')}`, 2);
  if (rest.some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(`${verbUsage(noun, verbName)}\n`);
    return;
  }

  // Parse before touching any service: a typo should not wait on a database connection.
  const args = parseVerbArgs(noun, verbName, verb, rest);
  verb.check?.(args);
  const runtime = await import('./admin.d/runtime');
  try {
    if (verb.database !== false) {
      const applied = await runtime.openServices();
      if (applied.length) process.stderr.write(`${PROGRAM}: applied ${applied.length} migration(s): ${applied.join(', ')}\n`);
    }
    const result = await verb.run(args);
    process.stdout.write(`${JSON.stringify(result ?? null, null, 2)}\n`);
  } finally {
    await runtime.closeServices();
  }
}

main(process.argv.slice(2)).catch(async (err) => {
  if (err instanceof UsageError) {
    fail(`${err.message}${err.hint ? ` (see ${err.hint})` : ''}`, 2);
  } else {
    const { describeError } = await import('./admin.d/runtime').catch(() => ({ describeError: (e: unknown) => String((e as Error)?.message ?? e) }));
    fail(describeError(err), 1);
    if (process.env.ADMIN_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
  }
}).finally(() => {
  // Connections are closed above, so this normally exits at once; the unref'd timer only
  // matters if a library leaves a handle open, which must not hang an operator's shell.
  setTimeout(() => process.exit(), 2_000).unref();
});
