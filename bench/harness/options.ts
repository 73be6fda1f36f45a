import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
const HELP = { help: { type: 'boolean', default: false } } as const;

/**
 * A bench's command line (node:util parseArgs, unknown options refused): `--help` prints `help`
 * and exits before the bench touches anything.
 */
export function benchOptions<const O extends Options>(options: O, help: string | (() => string)) {
  const { values } = parseArgs<{ options: O & typeof HELP; strict: true }>({ options: { ...options, ...HELP }, strict: true });
  if ((values as { help?: boolean }).help) {
    console.log(typeof help === 'function' ? help() : help);
    process.exit(0);
  }
  return values;
}

/** A numeric option, refused unless it is a number ≥ min (and whole when asked). */
export function numberOption(values: Record<string, unknown>, name: string, { min = 0, integer = false } = {}): number {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) throw new Error(`--${name} must be a number ≥ ${min}`);
  return n;
}
