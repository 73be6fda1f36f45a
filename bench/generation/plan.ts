import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { randomBase62 } from '../../lib/ids';
import { replayer, type CapturedStatement } from '../harness/statements';
import type { CensusDump, CensusStatement } from './census';

// What the generation bench's bare baselines replay per job (bench/README.md, generation): the
// bare server the accept's statements around one workflow start, the bare worker each step's.
// Minimal: one INSERT, one activity doing one UPDATE; same statements: one job's as census.ts
// captured them in the service, with fresh ids per replay so every row is new.

export interface Plan {
  /** The job id as captured: what `rebind` replaces with the replay's id. */
  jobId: string;
  acceptBefore: CensusStatement[];
  acceptAfter: CensusStatement[];
  /** The workflow's steps in order: each an activity (local or not) and its statements. */
  activities: Array<{ type: string; local: boolean; statements: CensusStatement[] }>;
}

export const BASELINE_TABLE = 'bench_gen_baseline';

/** The minimal baseline: one row inserted before the workflow starts, one activity setting its completed_at. */
export function minimalPlan(): Plan {
  const jobId = `job_${'0'.repeat(24)}`;
  const statement = (text: string): CensusStatement => ({ client: 0, text, values: [jobId], startMs: 0, endMs: 0 });
  const complete = statement(`update ${BASELINE_TABLE} set completed_at = now() where id = $1`);
  return {
    jobId,
    acceptBefore: [statement(`insert into ${BASELINE_TABLE} (id) values ($1)`)],
    acceptAfter: [],
    activities: [{ type: 'completeBareJob', local: false, statements: [complete] }],
  };
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
      const files = pids.map((pid) => path.join(dir, `${pid}.json`));
      for (const f of files) fs.rmSync(f, { force: true });
      signal('dump');
      for (const deadline = Date.now() + 10_000; !files.every((f) => fs.existsSync(f)); await new Promise((r) => setTimeout(r, 50)))
        if (Date.now() > deadline) throw new Error('the statement census did not answer');
      return files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as CensusDump);
    },
  };
}

/** Statements per job between two dumps of one process, by activity then text, largest first. */
export function perJob(before: CensusDump, after: CensusDump, jobs: number): Array<{ activity: string; text: string; perJob: number }> {
  return Object.entries(after.counts)
    .flatMap(([activity, texts]) =>
      Object.entries(texts).map(([text, n]) => ({ activity, text, perJob: (n - (before.counts[activity]?.[text] ?? 0)) / jobs })),
    )
    .filter((r) => r.perJob > 0)
    .sort((a, b) => b.perJob - a.perJob);
}

/**
 * The plan of one captured job: the API's statements split at its workflow start, the worker's by
 * the job's activities they ran in. Nothing else may run on the service meanwhile.
 */
export function planOf(api: CensusDump, worker: CensusDump, jobId: string): Plan {
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

export const readPlan = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Plan;

/** Ids a job mints (lib/ids.ts prefixes): replaced in a replay; the workspace's and project's stay. */
const MINTED = /\b(?:job|post|evt|slot)_[0-9A-Za-z]{24}\b/g;

/** The statements with `plan.jobId` as `jobId` and every other minted id fresh, as a replayer over `pool`. */
export function rebind(pool: pg.Pool, plan: Plan, statements: readonly CensusStatement[], jobId: string) {
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
export function describePlan(plan: Plan): string {
  const line = (where: string, s: CensusStatement) => `    ${where}: ${s.text.replace(/\s+/g, ' ').slice(0, 110)}`;
  return [
    ...plan.acceptBefore.map((s) => line('accept', s)),
    '    accept: (workflow start)',
    ...plan.acceptAfter.map((s) => line('accept', s)),
    ...plan.activities.flatMap((a) => a.statements.map((s) => line(a.type, s))),
  ].join('\n');
}
