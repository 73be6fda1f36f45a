import { parseArgs } from 'node:util';

// The operator CLI's command table. Each noun lives in its own module under
// bin/admin.d/commands/ and calls registerCommands when imported; bin/admin.ts imports every
// module in that folder, so a new noun is one new file and no shared list to edit:
//
//   // bin/admin.d/commands/connection.ts
//   registerCommands('connection', {
//     show: {
//       summary: 'One project connection.',
//       flags: { project: { required: true, value: 'proj_x', help: 'project id' } },
//       async run(args) { return loadConnection(args.need('project')); },
//     },
//   }, { summary: 'Network connections.' });
//
// The entry point parses and checks flags, then (unless the verb says database: false) runs
// the preflight and migrations, calls run, prints its result as JSON and closes connections.
// Throw UsageError (args.usage(...)) for a malformed command line, anything else for a failure.
//
// This module deliberately imports nothing from lib/: the entry point sets environment
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

export interface Verb {
  summary: string;
  flags?: Record<string, FlagSpec>;
  /** false for verbs that never touch Postgres or Redis (no preflight, no migration). */
  database?: boolean;
  examples?: readonly string[];
  /**
   * Validation that needs no service (value formats, flag combinations). It runs before the
   * preflight, so a malformed command line fails fast with exit 2 even when Postgres is down.
   */
  check?(args: Args): void;
  /** The returned value is printed as JSON on stdout. */
  run(args: Args): Promise<unknown>;
}

interface Noun {
  summary: string;
  verbs: Map<string, Verb>;
}

const nouns = new Map<string, Noun>();

/**
 * Adds verbs to a noun. Several modules may contribute verbs to the same noun (a later one
 * must not silently replace an earlier verb, so a clash throws at load time).
 */
export function registerCommands(noun: string, verbs: Record<string, Verb>, opts: { summary?: string } = {}): void {
  if (!/^[a-z][a-z0-9-]*$/.test(noun)) throw new Error(`admin command noun "${noun}" must be lower-case words joined by dashes`);
  let entry = nouns.get(noun);
  if (!entry) {
    entry = { summary: opts.summary ?? '', verbs: new Map() };
    nouns.set(noun, entry);
  } else if (opts.summary && !entry.summary) {
    entry.summary = opts.summary;
  }
  for (const [name, verb] of Object.entries(verbs)) {
    if (name === 'help') throw new Error(`admin command ${noun}: "help" is reserved`);
    if (entry.verbs.has(name)) throw new Error(`admin command "${noun} ${name}" is registered twice`);
    for (const flag of Object.keys(verb.flags ?? {})) {
      if (flag === 'help') throw new Error(`admin command "${noun} ${name}": --help is reserved`);
    }
    entry.verbs.set(name, verb);
  }
}

export function findNoun(noun: string): Noun | undefined {
  return nouns.get(noun);
}

export function nounNames(): string[] {
  return [...nouns.keys()].sort();
}

/** Typed access to parsed flags; every accessor names the flag in its error. */
export class Args {
  readonly command: string;
  private readonly values: Record<string, string | boolean | Array<string | boolean> | undefined>;
  constructor(command: string, values: Record<string, string | boolean | Array<string | boolean> | undefined>) {
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
    if (typeof s !== 'string') return undefined;
    return s;
  }

  /** A required string; declared-required flags are already checked, this covers the rest. */
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
    return all.flatMap((x) => x.split(',')).map((x) => x.trim()).filter((x) => x !== '');
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

/** Parses the flags of one verb. Throws UsageError for anything the verb did not declare. */
export function parseVerbArgs(noun: string, verbName: string, verb: Verb, argv: string[]): Args {
  const command = `${noun} ${verbName}`;
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const [name, spec] of Object.entries(verb.flags ?? {})) options[name] = { type: spec.type ?? 'string', multiple: spec.multiple ?? false };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  } catch (err) {
    // parseArgs messages are sentences about the argv ("Unknown option '--x'"), which is what
    // the operator needs; only the trailing advice about "--" is noise here.
    const message = (err as Error).message.replace(/\. To specify a positional argument.*$/s, '').replace(/\.$/, '');
    throw new UsageError(message, `${PROGRAM} ${command} --help`);
  }
  const values = parsed.values as Record<string, string | boolean | Array<string | boolean> | undefined>;
  for (const [name, spec] of Object.entries(verb.flags ?? {})) {
    const v = values[name];
    if (spec.required && (v === undefined || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0))) {
      throw new UsageError(`missing ${flagSyntax(name, spec)}`, `${PROGRAM} ${command} --help`);
    }
    if (spec.choices && v !== undefined) {
      for (const one of Array.isArray(v) ? v : [v]) {
        if (typeof one === 'string' && !spec.choices.includes(one)) {
          throw new UsageError(`--${name} must be one of ${spec.choices.join(', ')} (got "${one}")`, `${PROGRAM} ${command} --help`);
        }
      }
    }
  }
  return new Args(command, values);
}

export function mainUsage(): string {
  const lines = [
    `Usage: ${PROGRAM} <noun> <verb> [--flag value ...]`,
    `       npm run admin -- <noun> <verb> [--flag value ...]`,
    '',
    'Operator commands for provisioning workspaces, users, projects and API keys.',
    'Successful commands print JSON on stdout; errors print one line on stderr and exit',
    'non-zero (2 for a malformed command line, 1 for a refused or failed operation;',
    'ADMIN_DEBUG=1 adds the stack trace). DATABASE_URL and REDIS_URL select the services.',
    '',
    'Commands:',
  ];
  const width = Math.max(0, ...nounNames().flatMap((n) => [...nouns.get(n)!.verbs.keys()].map((v) => `${n} ${v}`.length)));
  for (const n of nounNames()) {
    for (const [v, verb] of nouns.get(n)!.verbs) lines.push(`  ${`${n} ${v}`.padEnd(width)}  ${verb.summary}`);
  }
  lines.push('', `Run "${PROGRAM} <noun> help" or "${PROGRAM} <noun> <verb> --help" for the flags of a command.`);
  return lines.join('\n');
}

export function nounUsage(noun: string): string {
  const entry = nouns.get(noun)!;
  const lines = [`Usage: ${PROGRAM} ${noun} <verb> [--flag value ...]`, ''];
  if (entry.summary) lines.push(entry.summary, '');
  for (const [v] of entry.verbs) lines.push(verbUsage(noun, v), '');
  return lines.join('\n').trimEnd();
}

export function verbUsage(noun: string, verbName: string): string {
  const verb = nouns.get(noun)!.verbs.get(verbName)!;
  const flags = Object.entries(verb.flags ?? {});
  const synopsis = flags.map(([name, spec]) => {
    const s = flagSyntax(name, spec) + (spec.multiple ? ' ...' : '');
    return spec.required ? s : `[${s}]`;
  });
  const lines = [`${PROGRAM} ${noun} ${verbName} ${synopsis.join(' ')}`.trimEnd(), `  ${verb.summary}`];
  if (flags.length) {
    const width = Math.max(...flags.map(([name, spec]) => flagSyntax(name, spec).length));
    for (const [name, spec] of flags) {
      const notes = [spec.required ? 'required' : '', spec.multiple ? 'repeatable' : ''].filter(Boolean).join(', ');
      lines.push(`    ${flagSyntax(name, spec).padEnd(width)}  ${spec.help}${notes ? ` (${notes})` : ''}`);
    }
  }
  for (const example of verb.examples ?? []) lines.push(`  e.g. ${PROGRAM} ${noun} ${verbName} ${example}`);
  return lines.join('\n');
}
