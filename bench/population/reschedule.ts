import http from 'node:http';
import type { Bench, Population, Slices } from '../population';
import { prng } from '../harness/content';
import { requestText } from '../harness/load';
import { snapshot } from '../harness/proc';
import { createAll, type CreateResult } from '../publishing/creation';
import { futureSlot } from './plan';
import { CONCURRENCY, POSTS, TASK_QUEUE } from './settings';
import { idle } from '../harness/taskQueue';
import { growth, postgresReading, temporalReading, type StorageGrowth } from './storage';
import { drain, type Expected } from './verify';

// The population changes its mind (issue 36): a tenth of the posts rescheduled and a hundredth
// unscheduled through PATCH /v1/posts/{id} (spec 4.4). Most move within the month; a few are
// chosen so the outcome shows within the run: half of the C slice (due a few minutes from now)
// moved a minute later, as many far posts moved to that same minute, and the other half of the
// C slice unscheduled before it falls due. None of them may go out early or after all.

export interface RescheduleResult {
  expected: Map<string, Expected>;
  unscheduled: Set<string>;
  newInMs: number;
  inRun: CreateResult;
  reschedules: CreateResult;
  unschedules: CreateResult;
  /** The in-run PATCHes were all answered before the C slice fell due. */
  inRunBeforeDue: boolean;
  temporal: StorageGrowth;
  service: StorageGrowth;
  cpu: Awaited<ReturnType<Bench['cpuPer']>>;
  rssKiB: number;
  peakRssKiB: number;
}

type Change = { id: string; projectId: string; scheduledFor: string | null };

export async function rescheduleAll(b: Bench, pop: Population, sl: Slices): Promise<RescheduleResult> {
  const rand = prng(4242);
  const far = [...pop.far];
  for (let i = far.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [far[i], far[j]] = [far[j]!, far[i]!];
  }
  const c = sl.cIds.filter((x): x is { id: string; projectId: string } => !!x.id);
  const half = Math.floor(c.length / 2);
  const cMoved = c.slice(0, half);
  const cUnscheduled = c.slice(half);
  const movedIn = far.slice(0, cMoved.length);
  let k = movedIn.length;
  const rFar = far.slice(k, (k += Math.max(0, Math.round(POSTS * 0.1) - cMoved.length - movedIn.length)));
  const uFar = far.slice(k, (k += Math.max(0, Math.round(POSTS * 0.01) - cUnscheduled.length)));
  const newInMs = sl.tC + 60_000;

  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const patch = async (x: Change): Promise<string> => {
    const url = new URL(`http://127.0.0.1:${b.procs.api.port}/v1/posts/${x.id}`);
    const headers = { authorization: `Bearer ${pop.keyByProject.get(x.projectId)}`, 'content-type': 'application/json' };
    const res = await requestText(agent, url, 'PATCH', headers, JSON.stringify({ scheduledFor: x.scheduledFor }));
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 300)}`);
    return x.id;
  };
  const t0 = await temporalReading(b.tier.store);
  const d0 = await postgresReading(process.env.DATABASE_URL!);
  const peakFrom = b.procs.worker.samples.length;

  // Those whose outcome shows within the run go first, so they are answered before the C slice is due.
  const newIn = new Date(newInMs).toISOString();
  const inRunChanges: Change[] = [
    ...cMoved.map((x) => ({ ...x, scheduledFor: newIn })),
    ...movedIn.map((x) => ({ id: x.id, projectId: x.projectId, scheduledFor: newIn })),
    ...cUnscheduled.map((x) => ({ ...x, scheduledFor: null })),
  ];
  const inRun = await createAll(inRunChanges, patch, CONCURRENCY);
  const inRunBeforeDue = Date.now() < sl.tC;
  console.log(
    `• in-run changes: ${cMoved.length} of the C slice moved to ${newIn.slice(11, 19)}, ${movedIn.length} far posts moved to the same minute, ${cUnscheduled.length} of the C slice unscheduled — answered ${((sl.tC - Date.now()) / 1000).toFixed(1)} s before the C slice is due${inRun.errors ? `; ${inRun.errors} errors: ${inRun.errorSamples[0]}` : ''}`,
  );

  const cpu0 = snapshot();
  const every = Math.max(1000, Math.round(rFar.length / 5 / 1000) * 1000);
  const reschedules = await createAll(
    rFar.map((x) => ({ id: x.id, projectId: x.projectId, scheduledFor: futureSlot(rand, x.zone, Date.now()).toISOString() })),
    patch,
    CONCURRENCY,
    (n) => n % every === 0 && console.log(`    ${n.toLocaleString('en-US')}/${rFar.length.toLocaleString('en-US')} rescheduled`),
  );
  const unschedules = await createAll(
    uFar.map((x) => ({ id: x.id, projectId: x.projectId, scheduledFor: null })),
    patch,
    CONCURRENCY,
  );
  agent.destroy();
  await idle(b.connection, TASK_QUEUE, 600_000);
  const cpu1 = snapshot();
  const cpu = await b.cpuPer(cpu0, cpu1, rFar.length + uFar.length);
  const rssKiB = b.procs.rssKiB();
  const peakRssKiB = Math.max(0, ...b.procs.worker.samples.slice(peakFrom).map((s) => s.rssKiB));
  const t1 = await temporalReading(b.tier.store);
  const d1 = await postgresReading(process.env.DATABASE_URL!);
  console.log(
    `• ${reschedules.rate.toFixed(0)} reschedules/s (${rFar.length - reschedules.errors} of ${rFar.length}, p50 ${reschedules.latencyMs.p50.toFixed(0)} ms / p99 ${reschedules.latencyMs.p99.toFixed(0)} ms), ${unschedules.rate.toFixed(0)} unschedules/s (${uFar.length - unschedules.errors} of ${uFar.length}, p50 ${unschedules.latencyMs.p50.toFixed(0)} ms)${reschedules.errors + unschedules.errors ? ` — errors: ${[...reschedules.errorSamples, ...unschedules.errorSamples][0]}` : ''}`,
  );

  // What must and must not go out, from the PATCHes that were answered: a refused one left its post as it was.
  const expected = new Map<string, Expected>();
  const unscheduled = new Set<string>();
  inRunChanges.forEach((ch, i) => {
    const ok = inRun.ids[i] !== null;
    const isC = i < cMoved.length || i >= cMoved.length + movedIn.length;
    if (ch.scheduledFor === null) {
      if (ok) unscheduled.add(ch.id);
      else expected.set(ch.id, { kind: 'C-moved', notBeforeMs: sl.tC });
    } else if (ok) expected.set(ch.id, { kind: isC ? 'C-moved' : 'moved-in', notBeforeMs: newInMs });
    else if (isC) expected.set(ch.id, { kind: 'C-moved', notBeforeMs: sl.tC });
  });
  uFar.forEach((x, i) => unschedules.ids[i] !== null && unscheduled.add(x.id));
  await drain(
    b.mon,
    [...expected.keys()].filter((id) => expected.get(id)!.notBeforeMs === newInMs),
    newInMs,
    `rescheduled into the run (due ${newIn.slice(11, 19)})`,
  );
  return {
    expected,
    unscheduled,
    newInMs,
    inRun,
    reschedules,
    unschedules,
    inRunBeforeDue,
    temporal: growth(t0, t1),
    service: growth(d0, d1),
    cpu,
    rssKiB,
    peakRssKiB,
  };
}
