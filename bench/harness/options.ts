import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A numeric option, refused unless it is a number ≥ min (and whole when asked). */
export function numberOption(values: Record<string, unknown>, name: string, { min = 0, integer = false } = {}): number {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) throw new Error(`--${name} must be a number ≥ ${min}`);
  return n;
}

/** The bounds of a flag that counts something: a whole number, at least 1. */
export const COUNT = { min: 1, integer: true } as const;

/**
 * One flag of a bench, said once: its default and the line of `--help` about it (`arg` names its
 * value there; a help text that states its own default gets none appended). A flag with a number
 * for default is a number, one with a string a string; one without a default says its `type`,
 * and a flag of type boolean is off unless given. A number is refused unless it is ≥ `min` (0 by
 * default), whole when `integer`.
 */
export type Flag =
  | { type: 'boolean'; help: string }
  | { type?: 'string'; default?: string; arg?: string; help: string }
  | { type?: 'number'; default?: number; arg?: string; help: string; min?: number; integer?: boolean };

/** A flag with every field it may have, and its kind. */
type AnyFlag = { type?: string; default?: string | number; arg?: string; help: string; min?: number; integer?: boolean };
const kindOf = (f: AnyFlag) => f.type ?? typeof f.default;

type FlagValue<F> = F extends { type: 'boolean' }
  ? boolean
  : F extends { default: number }
    ? number
    : F extends { type: 'number' }
      ? number | undefined
      : F extends { default: string }
        ? string
        : string | undefined;

/** `--help`: `about`, a line per flag (one this long or longer has its help on the lines below it), `footer`. */
function helpText(about: string, flags: Record<string, AnyFlag>, footer?: string, WIDE = 24): string {
  const heads = Object.entries(flags).map(
    ([name, f]) => `--${name}${kindOf(f) === 'boolean' ? '' : f.arg?.startsWith('=') ? f.arg : ` ${f.arg ?? 'N'}`}`,
  );
  const width = Math.max(...heads.filter((h) => h.length < WIDE).map((h) => h.length)) + 2;
  const lines = Object.values(flags).map((f, i) => {
    const dflt = kindOf(f) !== 'boolean' && f.default !== undefined && f.default !== '' && !/\bdefault\b/.test(f.help);
    const [first, ...rest] = `${f.help}${dflt ? ` (default ${f.default})` : ''}`.split('\n');
    const head = heads[i]!.length < WIDE ? `  ${heads[i]!.padEnd(width)}${first}` : `  ${heads[i]}\n${' '.repeat(width + 2)}${first}`;
    return [head, ...rest.map((l) => `${' '.repeat(width + 2)}${l.trim()}`)].join('\n');
  });
  return `${about}\n\nOptions:\n${lines.join('\n')}${footer ? `\n\n${footer}` : ''}`;
}

/**
 * A bench's command line from its flags, each stated once (see Flag; node:util parseArgs, unknown
 * options refused): `--help` prints the help and exits before the bench touches anything;
 * otherwise the values, numbers as numbers.
 */
export function benchFlags<const F extends Record<string, Flag>>(
  about: string,
  flags: F,
  footer?: string,
): { [K in keyof F]: FlagValue<F[K]> } {
  const all: Record<string, AnyFlag> = { ...flags };
  const options: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', default: false } };
  for (const [name, f] of Object.entries(all))
    options[name] =
      kindOf(f) === 'boolean'
        ? { type: 'boolean', default: false }
        : { type: 'string', ...(f.default !== undefined && { default: String(f.default) }) };
  const { values } = parseArgs({ options, strict: true }) as { values: Record<string, unknown> };
  if (values.help) {
    console.log(helpText(about, all, footer));
    process.exit(0);
  }
  for (const [name, f] of Object.entries(all))
    if (kindOf(f) === 'number' && values[name] !== undefined) values[name] = numberOption(values, name, { min: f.min, integer: f.integer });
  return values as never;
}
