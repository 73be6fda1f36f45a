// Operator CLI: `bin/admin <noun> <verb> [--flag value ...]` (or `npm run admin -- ...`).
// One module per noun in admin/cli/commands/ (listed below); commander parses and answers
// help and usage errors (admin/cli/registry.ts). Successful commands print JSON on stdout,
// failures one line on stderr: exit 2 when the command line is wrong, 1 when the operation failed.
import { CommanderError } from 'commander';
import { buildProgram, describeUsageError, PROGRAM, UsageError, type Noun, type Runner } from '../admin/cli/registry';

// The shared logger writes info lines to stdout, which would corrupt the JSON a script reads.
// Set before the configuration is first imported (every lib import is dynamic).
process.env.LOG_LEVEL ||= 'warn';

// Start-up time is most of what a scripted call costs, so only the named noun's module (and,
// when it runs, the services it uses) is loaded; help and unknown nouns load them all.
const NOUNS: Record<string, () => Promise<{ default: Noun }>> = {
  agency: () => import('../admin/cli/commands/agency'),
  budget: () => import('../admin/cli/commands/budget'),
  connection: () => import('../admin/cli/commands/connection'),
  grant: () => import('../admin/cli/commands/grant'),
  idea: () => import('../admin/cli/commands/idea'),
  jobs: () => import('../admin/cli/commands/jobs'),
  key: () => import('../admin/cli/commands/key'),
  knowledge: () => import('../admin/cli/commands/knowledge'),
  llm: () => import('../admin/cli/commands/llm'),
  member: () => import('../admin/cli/commands/member'),
  network: () => import('../admin/cli/commands/network'),
  note: () => import('../admin/cli/commands/note'),
  oauth: () => import('../admin/cli/commands/oauth'),
  'oauth-client': () => import('../admin/cli/commands/oauth-client'),
  post: () => import('../admin/cli/commands/post'),
  'post-status': () => import('../admin/cli/commands/post-status'),
  project: () => import('../admin/cli/commands/project'),
  sources: () => import('../admin/cli/commands/sources'),
  usage: () => import('../admin/cli/commands/usage'),
  user: () => import('../admin/cli/commands/user'),
  webhook: () => import('../admin/cli/commands/webhook'),
  workspace: () => import('../admin/cli/commands/workspace'),
};

function fail(message: string, code: 1 | 2): void {
  process.stderr.write(`${PROGRAM}: ${message}\n`);
  process.exitCode = code;
}

const runVerb: Runner = async (_command, verb, args) => {
  // Checked before touching any service: a typo should not wait on a database connection.
  verb.check?.(args);
  if (verb.database === false) {
    process.stdout.write(`${JSON.stringify((await verb.run(args)) ?? null, null, 2)}\n`);
    return;
  }
  const runtime = await import('../admin/cli/runtime');
  try {
    const applied = await runtime.openServices({ redis: verb.redis ?? false });
    if (applied.length) process.stderr.write(`${PROGRAM}: applied ${applied.length} migration(s): ${applied.join(', ')}\n`);
    const result = await verb.run(args);
    process.stdout.write(`${JSON.stringify(result ?? null, null, 2)}\n`);
  } finally {
    await runtime.closeServices();
  }
};

async function main(argv: string[]): Promise<void> {
  const first = argv[0];
  const names = Object.keys(NOUNS).sort();
  const wanted = first !== undefined && Object.hasOwn(NOUNS, first) ? [first] : names;
  const nouns = await Promise.all(wanted.map(async (n) => (await NOUNS[n]!()).default));
  const program = buildProgram(nouns, runVerb);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // Help asked for (exit 0), or shown because the noun or verb is missing (exit 2).
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return;
    if (err.code === 'commander.help') {
      if (err.exitCode !== 0) process.exitCode = 2;
      return;
    }
    fail(describeUsageError(err, argv, names), 2);
  }
}

main(process.argv.slice(2))
  .catch(async (err) => {
    if (err instanceof UsageError) {
      fail(`${err.message}${err.hint ? ` (see ${err.hint})` : ''}`, 2);
    } else {
      const { describeError } = await import('../admin/cli/runtime').catch(() => ({
        describeError: (e: unknown) => String((e as Error)?.message ?? e),
      }));
      fail(describeError(err), 1);
      if (process.env.ADMIN_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
    }
  })
  .finally(() => {
    // Connections are closed above, so this normally exits at once; the unref'd timer only
    // matters if a library leaves a handle open, which must not hang an operator's shell.
    setTimeout(() => process.exit(), 2_000).unref();
  });
