import { Command, CommanderError, Help, Option } from 'commander';

// The operator CLI's command table, on commander. Each noun lives in its own module under
// admin/cli/commands/<noun>.ts and default-exports defineNoun(...); bin/admin.ts lists the
// modules and imports only the one the command line names (every module for `help`), so a
// command loads the services it uses and nothing else:
//
//   // admin/cli/commands/connection.ts
//   export default defineNoun('connection', 'Network connections.', {
//     show: {
//       summary: 'One project connection.',
//       flags: { project: { required: true, value: 'proj_x', help: 'project id' } },
//       async run(args) {
//         const { loadConnection } = await import('../../connections');
//         return loadConnection(args.need('project'));
//       },
//     },
//   });
//
// Commander parses the flags and answers help and usage errors; this module turns a verb spec
// into a commander command and runs it: check (no services), then (unless the verb says
// database: false) the preflight (Redis only for verbs that say redis: true) and migrations,
// run, JSON on stdout, connections closed.
// Throw UsageError (args.usage(...)) for a malformed command line, anything else for a failure.
//
// Command modules import services lazily (inside run): the entry point sets environment
// defaults before the configuration is first read, and help must work without a database.

export const PROGRAM = 'bin/admin';

/** The command line itself is wrong (exit 2), as opposed to a refused operation (exit 1). */
export class UsageError extends Error {
  readonly hint: string | undefined;
  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'UsageError';
    this.hint = hint;
  }
}

export interface FlagSpec {
  /** Default 'string'. */
  type?: 'string' | 'boolean';
  /** May be given several times; list() also splits each value on commas. */
  multiple?: boolean;
  required?: boolean;
  /** Checked before the verb runs, case-sensitively. */
  choices?: readonly string[];
  /** Placeholder shown in usage, e.g. "org_x". */
  value?: string;
  help: string;
}

/** The flags many verbs share, written once so that they read and help alike in every noun. */
export const flag = {
  workspace: { required: true, value: 'org_x', help: 'workspace id' },
  /** Narrows a listing or a sweep; without it, every workspace. */
  onlyWorkspace: { value: 'org_x', help: 'only this workspace' },
  project: { required: true, value: 'proj_x', help: 'project id' },
  onlyProject: { value: 'proj_x', help: 'only this project' },
  /** A number of rows or items: `help` says of what, and the default and bounds. */
  count: (help: string): FlagSpec => ({ value: 'N', help }),
  /** An amount of money in cents, or `unlimited` (read with Args.limit). */
  cents: (help: string): FlagSpec => ({ value: 'CENTS|unlimited', help }),
} satisfies Record<string, FlagSpec | ((help: string) => FlagSpec)>;

export interface Verb {
  summary: string;
  flags?: Record<string, FlagSpec>;
  /** false for verbs that never touch Postgres or Redis (no preflight, no migration). */
  database?: boolean;
  /**
   * true for verbs that publish on Redis (credential invalidation): Redis is then checked
   * before the verb runs and closed after it. Others never load the Redis client.
   */
  redis?: boolean;
  examples?: readonly string[];
  /** The flags part of the usage line, when the generated one cannot say it (alternatives). */
  synopsis?: string;
  /**
   * Validation that needs no service (value formats, flag combinations). It runs before the
   * preflight, so a malformed command line fails fast with exit 2 even when Postgres is down.
   */
  check?(args: Args): void;
  /** The returned value is printed as JSON on stdout. */
  run(args: Args): Promise<unknown>;
}

export interface Noun {
  name: string;
  summary: string;
  verbs: Record<string, Verb>;
}

export function defineNoun(name: string, summary: string, verbs: Record<string, Verb>): Noun {
  if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`admin command noun "${name}" must be lower-case words joined by dashes`);
  for (const [verb, spec] of Object.entries(verbs)) {
    if (verb === 'help') throw new Error(`admin command ${name}: "help" is reserved`);
    if (Object.hasOwn(spec.flags ?? {}, 'help')) throw new Error(`admin command "${name} ${verb}": --help is reserved`);
  }
  return { name, summary, verbs };
}

/** Typed access to parsed flags; every accessor names the flag in its error. */
export class Args {
  readonly command: string;
  private readonly values: Record<string, string | boolean | string[] | undefined>;
  constructor(command: string, values: Record<string, string | boolean | string[] | undefined>) {
    this.command = command;
    this.values = values;
  }

  has(name: string): boolean {
    return this.values[name] !== undefined;
  }

  string(name: string): string | undefined {
    const v = this.values[name];
    if (v === undefined) return undefined;
    const s = Array.isArray(v) ? v[v.length - 1] : v;
    return typeof s === 'string' ? s : undefined;
  }

  /** A required string; declared-required flags are already checked, this covers blanks and the rest. */
  need(name: string): string {
    const s = this.string(name);
    if (s === undefined || s.trim() === '') throw this.usage(`--${name} is required`);
    return s;
  }

  bool(name: string): boolean {
    return this.values[name] === true;
  }

  /** Every value of a repeatable flag, each also split on commas, blanks dropped. */
  list(name: string): string[] {
    const v = this.values[name];
    if (v === undefined) return [];
    const all = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
    return all
      .flatMap((x) => x.split(','))
      .map((x) => x.trim())
      .filter((x) => x !== '');
  }

  /** A whole number flag (default when absent), refused as a usage error otherwise. */
  int(name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw)) throw this.usage(`--${name} must be a whole number`);
    const n = Number(raw);
    if (range.min !== undefined && n < range.min) throw this.usage(`--${name} must be at least ${range.min}`);
    if (range.max !== undefined && n > range.max) throw this.usage(`--${name} must be at most ${range.max}`);
    return n;
  }

  /** A limit: a whole number (within `range`), or "unlimited" (lib/limits.ts LimitOverride). */
  limit(name: string, range: { max?: number } = {}): number | 'unlimited' | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (raw.toLowerCase() === 'unlimited') return 'unlimited';
    if (!/^\d+$/.test(raw)) throw this.usage(`--${name} must be a whole number or "unlimited"`);
    return this.int(name, 0, range);
  }

  usage(message: string): UsageError {
    return new UsageError(message, `${PROGRAM} ${this.command} --help`);
  }
}

function flagSyntax(name: string, spec: FlagSpec): string {
  if (spec.type === 'boolean') return `--${name}`;
  const value = spec.choices ? spec.choices.join('|') : (spec.value ?? 'value');
  return `--${name} ${value}`;
}

function synopsis(noun: string, verbName: string, verb: Verb): string {
  if (verb.synopsis !== undefined) return `${PROGRAM} ${noun} ${verbName} ${verb.synopsis}`;
  const parts = Object.entries(verb.flags ?? {}).map(([name, spec]) => {
    const s = flagSyntax(name, spec) + (spec.multiple ? ' ...' : '');
    return spec.required ? s : `[${s}]`;
  });
  return `${PROGRAM} ${noun} ${verbName} ${parts.join(' ')}`.trimEnd();
}

const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** What a verb's action does once commander has parsed its flags. */
export type Runner = (command: string, verb: Verb, args: Args) => Promise<void>;

function verbCommand(noun: Noun, verbName: string, verb: Verb, runner: Runner): Command {
  const cmd = new Command(verbName).description(verb.summary).allowExcessArguments(false);
  for (const [name, spec] of Object.entries(verb.flags ?? {})) {
    const flags = spec.type === 'boolean' ? `--${name}` : `--${name} <${spec.value ?? 'value'}>`;
    const notes = [spec.required ? 'required' : '', spec.multiple ? 'repeatable' : ''].filter(Boolean).join(', ');
    const option = new Option(flags, `${spec.help}${notes ? ` (${notes})` : ''}`);
    if (spec.choices) option.choices(spec.choices);
    if (spec.required) option.makeOptionMandatory();
    if (spec.multiple) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    cmd.addOption(option);
  }
  const examples = (verb.examples ?? []).map((e) => `  e.g. ${PROGRAM} ${noun.name} ${verbName} ${e}`);
  cmd.usage(synopsis(noun.name, verbName, verb).slice(`${PROGRAM} ${noun.name} ${verbName} `.length) || '');
  if (examples.length) cmd.addHelpText('after', `\n${examples.join('\n')}`);
  cmd.action(async (opts: Record<string, unknown>) => {
    const values: Record<string, string | boolean | string[] | undefined> = {};
    for (const name of Object.keys(verb.flags ?? {})) values[name] = opts[camel(name)] as string | boolean | string[] | undefined;
    await runner(`${noun.name} ${verbName}`, verb, new Args(`${noun.name} ${verbName}`, values));
  });
  return cmd;
}

/** Help in the CLI's own terms: a flag reads `--plan PLAN` and a verb shows its whole synopsis. */
class AdminHelp extends Help {
  private readonly nounsByName: Map<string, Noun>;
  constructor(nouns: Map<string, Noun>) {
    super();
    this.nounsByName = nouns;
    this.sortSubcommands = false;
  }

  override optionTerm(option: Option): string {
    const choices = option.argChoices;
    const name = option.long ?? option.flags;
    if (choices) return `${name} ${choices.join('|')}`;
    return option.flags.replace(/ <([^>]+)>/, ' $1');
  }

  override subcommandTerm(cmd: Command): string {
    const parent = cmd.parent;
    const noun = parent ? this.nounsByName.get(parent.name()) : undefined;
    const verb = noun?.verbs[cmd.name()];
    if (noun && verb) return synopsis(noun.name, cmd.name(), verb);
    return cmd.name() === 'help' ? 'help [verb]' : cmd.name();
  }

  override optionDescription(option: Option): string {
    // The choices are already in the term, and required/repeatable in the description.
    return option.description;
  }
}

function verbHelp(noun: Noun, verbName: string, verb: Verb): string {
  const flags = Object.entries(verb.flags ?? {});
  const lines = [synopsis(noun.name, verbName, verb), `  ${verb.summary}`];
  const width = Math.max(0, ...flags.map(([name, spec]) => flagSyntax(name, spec).length));
  for (const [name, spec] of flags) {
    const notes = [spec.required ? 'required' : '', spec.multiple ? 'repeatable' : ''].filter(Boolean).join(', ');
    lines.push(`    ${flagSyntax(name, spec).padEnd(width)}  ${spec.help}${notes ? ` (${notes})` : ''}`);
  }
  for (const example of verb.examples ?? []) lines.push(`  e.g. ${PROGRAM} ${noun.name} ${verbName} ${example}`);
  return lines.join('\n');
}

function nounHelp(noun: Noun): string {
  const parts = [`Usage: ${PROGRAM} ${noun.name} <verb> [--flag value ...]`, noun.summary];
  for (const [verbName, verb] of Object.entries(noun.verbs)) parts.push(verbHelp(noun, verbName, verb));
  return `${parts.join('\n\n')}\n`;
}

function mainHelp(nouns: Noun[]): string {
  const lines = [
    `Usage: ${PROGRAM} <noun> <verb> [--flag value ...]`,
    `       npm run admin -- <noun> <verb> [--flag value ...]`,
    '',
    'Operator commands for provisioning workspaces, users, projects and API keys, and for',
    'running the service without a dashboard. Successful commands print JSON on stdout; errors',
    'print one line on stderr and exit non-zero (2 for a malformed command line, 1 for a refused',
    'or failed operation; ADMIN_DEBUG=1 adds the stack trace). DATABASE_URL and REDIS_URL select',
    'the services.',
    '',
    'Commands:',
  ];
  const rows = nouns.flatMap((n) => Object.entries(n.verbs).map(([v, verb]) => [`${n.name} ${v}`, verb.summary] as const));
  const width = Math.max(0, ...rows.map(([c]) => c.length));
  for (const [c, summary] of rows) lines.push(`  ${c.padEnd(width)}  ${summary}`);
  lines.push('', `Run "${PROGRAM} <noun> help" or "${PROGRAM} <noun> <verb> --help" for the flags of a command.`);
  return `${lines.join('\n')}\n`;
}

/**
 * The commander program for the given nouns. Commander's own error output is replaced by one
 * line in this CLI's words (see describeUsageError), thrown as a UsageError.
 */
export function buildProgram(nouns: Noun[], runner: Runner): Command {
  const byName = new Map(nouns.map((n) => [n.name, n]));
  const program = new Command(PROGRAM)
    .usage('<noun> <verb> [--flag value ...]')
    .helpCommand('help [noun]', 'show the commands, or the verbs of one noun')
    .configureHelp({ formatHelp: () => mainHelp(nouns) })
    .showSuggestionAfterError(true);
  const silence = (cmd: Command) => cmd.exitOverride().configureOutput({ outputError: () => {} });
  silence(program);
  for (const noun of nouns) {
    const nounCmd = new Command(noun.name)
      .description(noun.summary)
      .usage('<verb> [--flag value ...]')
      .helpCommand('help', `show the verbs of ${noun.name}`);
    nounCmd.configureHelp({ formatHelp: () => nounHelp(noun) });
    silence(nounCmd);
    for (const [verbName, verb] of Object.entries(noun.verbs)) {
      const cmd = verbCommand(noun, verbName, verb, runner);
      cmd.createHelp = () => new AdminHelp(byName);
      silence(cmd);
      nounCmd.addCommand(cmd);
    }
    program.addCommand(nounCmd);
  }
  return program;
}

/** One line for a commander parse error, in the wording the CLI has always used. */
export function describeUsageError(err: CommanderError, argv: readonly string[], knownNouns: readonly string[]): string {
  const message = err.message.replace(/^error: /, '');
  let m: RegExpExecArray | null;
  if ((m = /^required option '--([\w-]+)(?: <([^>]+)>)?' not specified/.exec(message))) return `missing --${m[1]}${m[2] ? ` ${m[2]}` : ''}`;
  if ((m = /^option '--([\w-]+)[^']*' argument '(.*)' is invalid\. Allowed choices are (.*)\.$/s.exec(message))) {
    return `--${m[1]} must be one of ${m[3]} (got "${m[2]}")`;
  }
  if ((m = /^unknown command '([^']+)'(.*)$/s.exec(message))) {
    const noun = argv[0] ?? '';
    if (knownNouns.includes(noun)) return `unknown command "${noun} ${m[1]}"${m[2] ?? ''}`;
    return `unknown command "${m[1]}"; one of ${knownNouns.join(', ')}. Run "${PROGRAM} help".`;
  }
  if ((m = /^unknown option '([^']+)'(.*)$/s.exec(message))) return `Unknown option '${m[1]}'${m[2] ?? ''}`;
  if ((m = /^option '([^']+)' argument missing/.exec(message))) return `option '${m[1].replace(/ <([^>]+)>/, ' $1')}' needs a value`;
  return message.replace(/\.$/, '');
}
