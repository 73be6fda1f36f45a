import type { Bench, Population, Slices } from '../population';
import { prng, shuffle } from '../harness/content';
import { snapshot } from '../harness/proc';
import { apiClient, createAll } from '../harness/stack';
import { idle } from '../harness/temporal';
import { futureSlot } from './plan';
import { DATABASE_URL, opt, TASK_QUEUE } from './settings';
import { storageMark } from './storage';
import { drain, type Expected } from './verify';

// The population changes its mind: reschedules and unschedules through PATCH /v1/posts/{id}
// (bench/README.md "population", 6.).

export type RescheduleResult = Awaited<ReturnType<typeof rescheduleAll>>;

type Change = { id: string; projectId: string; scheduledFor: string | null };

export async function rescheduleAll(b: Bench, pop: Population, sl: Slices) {
  const rand = prng(4242);
  const far = shuffle([...pop.far], rand);
  const half = Math.floor(sl.c.length / 2);
  const cMoved = sl.c.slice(0, half);
  const cUnscheduled = sl.c.slice(half);
  const movedIn = far.slice(0, cMoved.length);
  let k = movedIn.length;
  const rFar = far.slice(k, (k += Math.max(0, Math.round(opt.posts * 0.1) - cMoved.length - movedIn.length)));
  const uFar = far.slice(k, (k += Math.max(0, Math.round(opt.posts * 0.01) - cUnscheduled.length)));
  const newInMs = sl.tC + 60_000;

  const api = apiClient(b.procs.api.port, opt.concurrency);
  const patch = async (x: Change) => {
    await api.send('PATCH', `/v1/posts/${x.id}`, pop.keyByProject.get(x.projectId)!, { scheduledFor: x.scheduledFor });
    return x.id;
  };
  const mark = await storageMark(b.tier.store, DATABASE_URL);
  const peakFrom = b.procs.worker.samples.length;

  // Those whose outcome shows within the run go first, so they are answered before the C slice is due.
  const newIn = new Date(newInMs).toISOString();
  const to = (scheduledFor: string | null) => (x: { id: string; projectId: string }) => ({
    id: x.id,
    projectId: x.projectId,
    scheduledFor,
  });
  const inRunChanges: Change[] = [...cMoved.map(to(newIn)), ...movedIn.map(to(newIn)), ...cUnscheduled.map(to(null))];
  const inRun = await createAll(inRunChanges, patch, opt.concurrency);
  const inRunBeforeDue = Date.now() < sl.tC;
  console.log(
    `• in-run changes: ${cMoved.length} of the C slice moved to ${newIn.slice(11, 19)}, ${movedIn.length} far posts moved to the same minute, ${cUnscheduled.length} of the C slice unscheduled — answered ${((sl.tC - Date.now()) / 1000).toFixed(1)} s before the C slice is due${inRun.errors ? `; ${inRun.errors} errors: ${inRun.errorSamples[0]}` : ''}`,
  );

  const cpu0 = snapshot();
  const every = Math.max(1000, Math.round(rFar.length / 5 / 1000) * 1000);
  const reschedules = await createAll(
    rFar.map((x) => to(futureSlot(rand, x.zone, Date.now()).toISOString())(x)),
    patch,
    opt.concurrency,
    (n) => n % every === 0 && console.log(`    ${n.toLocaleString('en-US')}/${rFar.length.toLocaleString('en-US')} rescheduled`),
  );
  const unschedules = await createAll(uFar.map(to(null)), patch, opt.concurrency);
  api.close();
  await idle(b.connection, TASK_QUEUE, 600_000);
  const cpu = await b.cpuPer(cpu0, snapshot(), rFar.length + uFar.length);
  const rssKiB = b.procs.rssKiB();
  const peakRssKiB = b.procs.peakRssKiB(peakFrom);
  const { temporal, service } = await mark.growth();
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
  const dueNew = [...expected].filter(([, e]) => e.notBeforeMs === newInMs).map(([id]) => id);
  await drain(b.mon, dueNew, newInMs, `rescheduled into the run (due ${newIn.slice(11, 19)})`);
  return { expected, unscheduled, reschedules, unschedules, inRunBeforeDue, temporal, service, cpu, rssKiB, peakRssKiB };
}
