import { config } from './config';

// JSON lines on stdout: one object per event, easy to grep and to ship.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;
const threshold = LEVELS[(config.logLevel as Level)] ?? LEVELS.info;

function write(level: Level, msg: string, fields?: Record<string, unknown>) {
  if (LEVELS[level] < threshold) return;
  const line: Record<string, unknown> = { t: new Date().toISOString(), level, msg, ...fields };
  if (fields?.err instanceof Error) line.err = { name: fields.err.name, message: fields.err.message, stack: fields.err.stack };
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(JSON.stringify(line) + '\n');
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write('error', msg, fields),
};
