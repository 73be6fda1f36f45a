import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { randomBase62 } from '../../lib/ids';
import { replayer, type CapturedStatement } from '../harness/statements';
import type { CensusDump, CensusStatement } from './census';

// The generation bench's "same statements bare" baseline: one job's statements as census.ts
// captured them, replayed by the bare server (the accept's, around one workflow start) and the
// bare worker (each activity's), with fresh ids per replay so every row is new.

/** The captured job, split the way the replay runs it. */
interface SameStatementsPlan {
  /** The job id as captured: what `rebind` replaces with the replay's id. */
  jobId: string;
  acceptBefore: CensusStatement[];
  acceptAfter: CensusStatement[];
  /** By activity type, in the order the workflow ran them, and whether each ran as a local activity. */
  activities: Array<{ type: string; local: boolean; statements: CensusStatement[] }>;
}

/** The statement census of the API and the worker: a command in `dir`, each process's answer in `<pid>.json`. */
export function censusControl(dir: string) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  let n = 0;
  // A new text each time (the census acts on a change); the census reads it within 100 ms.
  const signal = (command: string) => fs.writeFileSync(path.join(dir, 'command'), `${command} ${++n}`);
  return {
    capture: async () => {
      signal('capture');
      await new Promise((r) => setTimeout(r, 300));
    },
    dump: async (pids: number[]): Promise<CensusDump[]> => {
      for (const pid of pids) fs.rmSync(path.join(dir, `${pid}.json`), { force: true });
      signal('dump');
      const deadline = Date.now() + 10_000;
      for (;;) {
        const files = pids.map((pid) => path.join(dir, `${pid}.json`));
        if (files.every((f) => fs.existsSync(f))) return files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as CensusDump);
        if (Date.now() > deadline) throw new Error('the statement census did not answer');
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** Statements per job between two dumps of one process, by activity then text, largest first. */
export function perJob(before: CensusDump, after: CensusDump, jobs: number): Array<{ activity: string; text: string; perJob: number }> {
  const out: Array<{ activity: string; text: string; perJob: number }> = [];
  for (const [activity, texts] of Object.entries(after.counts))
    for (const [text, n] of Object.entries(texts)) {
      const d = n - (before.counts[activity]?.[text] ?? 0);
      if (d > 0) out.push({ activity, text, perJob: d / jobs });
    }
  return out.sort((a, b) => b.perJob - a.perJob);
}

/**
 * The plan of one captured job: the API's statements split at its workflow start, the worker's by
 * the job's activities they ran in. Nothing else may run on the service meanwhile.
 */
export function planOf(api: CensusDump, worker: CensusDump, jobId: string): SameStatementsPlan {
  const start = api.captured.find((s) => 'marker' in s);
  if (!start) throw new Error('the API started no workflow while its statements were captured');
  const statements = (d: CensusDump) => d.captured.filter((s): s is CensusStatement => !('marker' in s));
  const apiStatements = statements(api);
  // The job's activities are those whose statements name the job; in the order they ran.
  const ofJob = new Set(statements(worker).flatMap((s) => (s.activity && s.values.some((v) => v === jobId) ? [s.activity] : [])));
  const activities = [...ofJob].map((type) => {
    const of = statements(worker).filter((s) => s.activity === type);
    return { type, local: of[0]?.local ?? false, statements: of };
  });
  return {
    jobId,
    acceptBefore: apiStatements.filter((s) => s.startMs < start.startMs),
    acceptAfter: apiStatements.filter((s) => s.startMs >= start.endMs),
    activities,
  };
}

export function readPlan(file: string): SameStatementsPlan {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as SameStatementsPlan;
}

/** Ids a job mints (lib/ids.ts prefixes): replaced in a replay; the workspace's and project's stay. */
const MINTED = /\b(?:job|post|evt|slot)_[0-9A-Za-z]{24}\b/g;

/** The statements with `plan.jobId` as `jobId` and every other minted id fresh, as a replayer over `pool`. */
export function rebind(pool: pg.Pool, plan: SameStatementsPlan, statements: readonly CensusStatement[], jobId: string) {
  const fresh = new Map<string, string>([[plan.jobId, jobId]]);
  const swap = (s: string) =>
    s.replace(MINTED, (id) => {
      let to = fresh.get(id);
      if (!to) fresh.set(id, (to = `${id.slice(0, id.indexOf('_'))}_${randomBase62(24)}`));
      return to;
    });
  const bound: CapturedStatement[] = statements.map((s) => ({
    ...s,
    // A named (prepared) statement keeps its text: Postgres knows it by name.
    text: s.name ? s.text : swap(s.text),
    values: s.values.map((v) => (typeof v === 'string' ? swap(v) : v)),
  }));
  return replayer(pool, bound);
}

/** One line per statement, for the log: where it ran and what it is. */
export function describePlan(plan: SameStatementsPlan): string {
  const line = (where: string, s: CensusStatement) => `    ${where}: ${s.text.replace(/\s+/g, ' ').slice(0, 110)}`;
  return [
    ...plan.acceptBefore.map((s) => line('accept', s)),
    '    accept: (workflow start)',
    ...plan.acceptAfter.map((s) => line('accept', s)),
    ...plan.activities.flatMap((a) => a.statements.map((s) => line(a.type, s))),
  ].join('\n');
}
