import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { WorkflowClient } from '@temporalio/client';
import pg from 'pg';
import type { CapturedStatement } from '../harness/statements';

// The generation bench's statement census, loaded into the service's API and worker before the
// app (`--import` after tsx, bench/generation.ts censusArgs): every pg statement of the process
// is counted by its text and by the activity it ran in (@temporalio/activity's context; none in
// the API), and, while a capture is on, recorded with its parameters, connection and timing, as
// bench/harness/statements.ts captures a read surface's request. The API's workflow starts are
// recorded too, as markers, so a replay knows which statements came before the start.
//
// The bench drives it with a command file: `capture` clears the recording and turns
// it on, `dump` writes what was counted and recorded to <BENCH_GEN_CENSUS_DIR>/<pid>.json and
// turns the capture off.

export interface CensusStatement extends CapturedStatement {
  /** The activity type the statement ran in, or undefined outside any activity. */
  activity?: string;
  /** Whether that activity ran as a local activity. */
  local?: boolean;
}

export interface CensusDump {
  pid: number;
  /** Statements so far by activity ('' outside one), then by text with spaces folded. */
  counts: Record<string, Record<string, number>>;
  /** The capture: statements in order, and workflow starts as `{ marker: 'workflowStart' }`. */
  captured: Array<CensusStatement | { marker: 'workflowStart'; startMs: number; endMs: number }>;
}

const dir = process.env.BENCH_GEN_CENSUS_DIR;
if (!dir) throw new Error('BENCH_GEN_CENSUS_DIR must be set');

// pg's own conversion of a parameter to its wire form (Date, array, object → text).
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils') as { prepareValue: (v: unknown) => unknown };
const counts: CensusDump['counts'] = {};
let captured: CensusDump['captured'] = [];
let capturing = false;
let t0 = 0;
const clients = new WeakMap<object, number>();
let nextClient = 0;

const activityOf = (): { type: string; local: boolean } | undefined => {
  try {
    const { activityType, isLocal } = Context.current().info;
    return { type: activityType, local: isLocal };
  } catch {
    return undefined;
  }
};

type Query = (this: pg.Client, ...args: unknown[]) => unknown;
const original = pg.Client.prototype.query as unknown as Query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const [first] = args;
  const config = (typeof first === 'string' ? { text: first } : first) as { text: string; name?: string; values?: unknown[] };
  const activity = activityOf();
  const text = config.text.replace(/\s+/g, ' ').trim();
  const byText = (counts[activity?.type ?? ''] ??= {});
  byText[text] = (byText[text] ?? 0) + 1;
  return capturing ? record.call(this, args, config, activity) : original.apply(this, args);
} as never;

/** The statement recorded with its parameters, connection and timing, then run. */
function record(
  this: pg.Client,
  args: unknown[],
  config: { text: string; name?: string; values?: unknown[] },
  activity: ReturnType<typeof activityOf>,
) {
  const [, second] = args;
  if (!clients.has(this)) clients.set(this, nextClient++);
  const s: CensusStatement = {
    client: clients.get(this)!,
    text: config.text,
    name: config.name,
    values: (Array.isArray(second) ? second : (config.values ?? [])).map((v) => {
      const p = prepareValue(v);
      return Buffer.isBuffer(p) ? { base64: p.toString('base64') } : (p as string | null);
    }),
    startMs: performance.now() - t0,
    endMs: NaN,
    activity: activity?.type,
    local: activity?.local,
  };
  captured.push(s);
  const end = () => (s.endMs = performance.now() - t0);
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const cb = args[last] as (...a: unknown[]) => void;
    args[last] = (...a: unknown[]) => (end(), cb(...a));
  }
  const r = original.apply(this, args);
  if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(end, end);
  return r;
}

const start = WorkflowClient.prototype.start;
WorkflowClient.prototype.start = async function (this: WorkflowClient, ...args: Parameters<typeof start>) {
  if (!capturing) return start.apply(this, args);
  const m = { marker: 'workflowStart' as const, startMs: performance.now() - t0, endMs: NaN };
  captured.push(m);
  try {
    return await start.apply(this, args);
  } finally {
    m.endMs = performance.now() - t0;
  }
} as typeof start;

// The command file is looked at ten times a second: a signal would be simpler, but the worker's
// native runtime does not keep running its task pollers through one.
let seen = '';
setInterval(() => {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, 'command'), 'utf8');
  } catch {
    return;
  }
  if (text === seen) return;
  seen = text;
  const command = text.split(' ')[0]!.trim();
  if (command === 'capture') {
    captured = [];
    t0 = performance.now();
    capturing = true;
    return;
  }
  capturing = false;
  for (const s of captured) if (Number.isNaN(s.endMs)) s.endMs = s.startMs;
  const dump: CensusDump = { pid: process.pid, counts, captured };
  const file = path.join(dir, `${process.pid}.json`);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(dump));
  fs.renameSync(`${file}.tmp`, file);
}, 100).unref();
