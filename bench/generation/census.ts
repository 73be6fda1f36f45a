import fs from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { WorkflowClient } from '@temporalio/client';
import pg from 'pg';
import { recordingQuery, type CapturedStatement, type Query } from '../harness/statements';

// The generation bench's statement census, imported into the service's API and worker before the app: every pg statement counted by text
// and activity, and while a capture is on recorded (as bench/harness/statements.ts does) with the API's workflow starts as markers. A
// command file (plan.ts censusControl) says `capture` or `dump` (to <BENCH_GEN_CENSUS_DIR>/<pid>.json).

/** A statement with the activity type it ran in (undefined outside any) and whether that ran as a local activity. */
export type CensusStatement = CapturedStatement & { activity?: string; local?: boolean };

export interface CensusDump {
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

function activityOf() {
  try {
    return Context.current().info;
  } catch {
    return undefined;
  }
}

const original = pg.Client.prototype.query as unknown as Query;
const onStatement = (s: CapturedStatement) => {
  const activity = activityOf();
  captured.push(Object.assign(s, { activity: activity?.activityType, local: activity?.isLocal }));
};
const recording = recordingQuery(original, () => t0, onStatement);
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
  const byText = (counts[activityOf()?.activityType ?? ''] ??= {});
  const folded = text.replace(/\s+/g, ' ').trim();
  byText[folded] = (byText[folded] ?? 0) + 1;
  return (capturing ? recording : original).apply(this, args);
} as never;

const start = WorkflowClient.prototype.start;
WorkflowClient.prototype.start = function (this: WorkflowClient, ...args: Parameters<typeof start>) {
  if (!capturing) return start.apply(this, args);
  const m = { marker: 'workflowStart' as const, startMs: performance.now() - t0, endMs: NaN };
  captured.push(m);
  return start.apply(this, args).finally(() => (m.endMs = performance.now() - t0));
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
  if (capturing) return void ([captured, t0] = [[], performance.now()]);
  for (const s of captured) if (Number.isNaN(s.endMs)) s.endMs = s.startMs;
  const file = path.join(dir, `${process.pid}.json`);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify({ counts, captured } satisfies CensusDump));
  fs.renameSync(`${file}.tmp`, file);
}, 100).unref();
