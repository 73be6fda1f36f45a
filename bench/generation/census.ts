import fs from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { WorkflowClient } from '@temporalio/client';
import pg from 'pg';
import { recordingQuery, type CapturedStatement, type Query } from '../harness/statements';

// The generation bench's statement census, loaded into the service's API and worker before the
// app (`--import`): every pg statement counted by text and by the activity it ran in, and, while
// a capture is on, recorded as bench/harness/statements.ts records them, with the API's workflow
// starts as markers. Driven by a command file (plan.ts censusControl): `capture` starts a
// recording, `dump` writes counts and recording to <BENCH_GEN_CENSUS_DIR>/<pid>.json.

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

const counts: CensusDump['counts'] = {};
let captured: CensusDump['captured'] = [];
let capturing = false;
let t0 = 0;

const activityOf = (): { type: string; local: boolean } | undefined => {
  try {
    const { activityType, isLocal } = Context.current().info;
    return { type: activityType, local: isLocal };
  } catch {
    return undefined;
  }
};

const original = pg.Client.prototype.query as unknown as Query;
const recording = recordingQuery(
  original,
  () => t0,
  (s) => {
    const activity = activityOf();
    captured.push(Object.assign(s, { activity: activity?.type, local: activity?.local }));
  },
);
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const [first] = args;
  const { text } = (typeof first === 'string' ? { text: first } : first) as { text: string };
  const byText = (counts[activityOf()?.type ?? ''] ??= {});
  const folded = text.replace(/\s+/g, ' ').trim();
  byText[folded] = (byText[folded] ?? 0) + 1;
  return (capturing ? recording : original).apply(this, args);
} as never;

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
  const command = path.join(dir, 'command');
  const text = fs.existsSync(command) ? fs.readFileSync(command, 'utf8') : seen;
  if (text === seen) return;
  seen = text;
  capturing = text.startsWith('capture');
  if (capturing) {
    [captured, t0] = [[], performance.now()];
    return;
  }
  for (const s of captured) if (Number.isNaN(s.endMs)) s.endMs = s.startMs;
  const dump: CensusDump = { pid: process.pid, counts, captured };
  const file = path.join(dir, `${process.pid}.json`);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(dump));
  fs.renameSync(`${file}.tmp`, file);
}, 100).unref();
