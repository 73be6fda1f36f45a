import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { randomBase62 } from '../../lib/ids';
import { until } from '../harness/proc';
import { replayer } from '../harness/statements';
import type { CensusDump, CensusStatement } from './census';

// What the generation bench's bare baselines replay per job (bench/README.md, generation): the bare
// server the accept's statements around one workflow start, the bare worker each step's; the
// minimal plan (baseline.ts) or one job's as census.ts captured them, fresh ids per replay.

export type Plan = ReturnType<typeof planOf>;

/** The statement census of the API and the worker: a command in `dir`, each process's answer in `<pid>.json`. */
export function censusControl(dir: string) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  let n = 0;
  // A new text each time (the census acts on a change); the census reads it within 100 ms.
  const signal = (command: string) => fs.writeFileSync(path.join(dir, 'command'), `${command} ${++n}`);
  return {
    async capture() {
      signal('capture');
      await sleep(300);
    },
    async dump(pids: number[]): Promise<CensusDump[]> {
      const files = pids.map((pid) => path.join(dir, `${pid}.json`));
      for (const f of files) fs.rmSync(f, { force: true });
      signal('dump');
      if (!(await until(async () => files.every((f) => fs.existsSync(f)), 10_000, 50)))
        throw new Error('the statement census did not answer');
      return files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as CensusDump);
    },
  };
}

/** One captured job's plan: the API's statements split at its workflow start, the worker's by the job's activities in order. */
export function planOf(api: CensusDump, worker: CensusDump, jobId: string) {
  const start = api.captured.find((s) => 'marker' in s);
  if (!start) throw new Error('the API started no workflow while its statements were captured');
  const [apiStatements, workerStatements] = [api, worker].map((d) => d.captured.filter((s): s is CensusStatement => !('marker' in s)));
  // The job's activities are those whose statements name the job.
  const ofJob = new Set(workerStatements!.flatMap((s) => (s.activity && s.values.includes(jobId) ? [s.activity] : [])));
  return {
    /** The job id as captured: what a replay replaces with its own. */
    jobId,
    acceptBefore: apiStatements!.filter((s) => s.startMs < start.startMs),
    acceptAfter: apiStatements!.filter((s) => s.startMs >= start.endMs),
    activities: [...ofJob].map((type) => {
      const statements = workerStatements!.filter((s) => s.activity === type);
      return { type, local: statements[0]?.local ?? false, statements };
    }),
  };
}

/** Ids a job mints (lib/ids.ts prefixes): replaced in a replay; the workspace's and project's stay. */
const MINTED = /\b(?:job|post|evt|slot)_[0-9A-Za-z]{24}\b/g;

/**
 * A bare child's task queue, plan and pool (the service's size, so neither side gets more database
 * sessions), from baseline.ts; `replay` runs statements with the plan's job id as `jobId`, other minted ids fresh.
 */
export function bareChild() {
  const { BENCH_GEN_BASELINE_TASK_QUEUE: taskQueue, BENCH_GEN_PLAN: file } = process.env;
  if (!taskQueue || !file) throw new Error('BENCH_GEN_BASELINE_TASK_QUEUE and BENCH_GEN_PLAN must be set');
  const plan = JSON.parse(fs.readFileSync(file, 'utf8')) as Plan;
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX || 20) });
  pool.on('error', () => undefined);
  const replay = (statements: readonly CensusStatement[], jobId: string) => {
    const fresh = new Map([[plan.jobId, jobId]]);
    const swap = (s: string) =>
      s.replace(MINTED, (id) => fresh.get(id) ?? fresh.set(id, `${id.slice(0, id.indexOf('_'))}_${randomBase62(24)}`).get(id)!);
    // A named (prepared) statement keeps its text: Postgres knows it by name.
    const bound = statements.map((s) => ({
      ...s,
      text: s.name ? s.text : swap(s.text),
      values: s.values.map((v) => (typeof v === 'string' ? swap(v) : v)),
    }));
    return replayer(pool, bound)();
  };
  return { taskQueue, plan, pool, replay };
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
