import { AsyncLocalStorage } from 'node:async_hooks';
import { asyncLocalStorage as activityStorage } from '@temporalio/activity';
import pino, { type DestinationStream, type Logger as PinoLogger } from 'pino';
import { config } from './config';

// JSON lines, one object per event, easy to grep and to ship: warn and error on stderr, the rest
// on stdout. Every line carries the ids of the work it belongs to without the call site passing
// them: `requestId` inside an API request (set by each door's request context), `workflowId`
// and `activityType` inside a Temporal activity, and `jobId` inside a generation activity (its
// workflow id is the job id, ARCHITECTURE.md). Fields given at the call site win.

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger whose lines all carry `bindings`. */
  child(bindings: LogFields): Logger;
}

const context = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` on every line logged inside it (across awaits), e.g. the request id. */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, fn);
}

const GENERATION_WORKFLOW = 'generatePostWorkflow';

function activityFields(): LogFields {
  const activity = activityStorage.getStore();
  if (!activity) return {};
  const { workflowExecution, workflowType, activityType } = activity.info;
  const workflowId = workflowExecution?.workflowId;
  return { workflowId, activityType, ...(workflowType === GENERATION_WORKFLOW ? { jobId: workflowId } : {}) };
}

const LEVELS = new Set(['debug', 'info', 'warn', 'error']);

function wrap(p: PinoLogger): Logger {
  return {
    debug: (msg, fields) => p.debug(fields ?? {}, msg),
    info: (msg, fields) => p.info(fields ?? {}, msg),
    warn: (msg, fields) => p.warn(fields ?? {}, msg),
    error: (msg, fields) => p.error(fields ?? {}, msg),
    child: (bindings) => wrap(p.child(bindings)),
  };
}

/** The process logger's construction; tests pass their own destination. */
export function createLogger(opts: { level?: string; destination?: DestinationStream } = {}): Logger {
  const level = opts.level && LEVELS.has(opts.level) ? opts.level : 'info';
  const destination =
    opts.destination ??
    pino.multistream(
      [
        { level: 'debug', stream: process.stdout },
        { level: 'warn', stream: process.stderr },
      ],
      { dedupe: true },
    );
  return wrap(
    pino(
      {
        level,
        base: undefined,
        messageKey: 'msg',
        timestamp: () => `,"t":"${new Date().toISOString()}"`,
        formatters: { level: (label) => ({ level: label }) },
        mixin: () => ({ ...activityFields(), ...context.getStore() }),
      },
      destination,
    ),
  );
}

export const log: Logger = createLogger({ level: config.logLevel });
