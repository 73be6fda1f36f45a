import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { Bench, Population, Slices } from '../population';
import { prng, shuffle } from '../harness/content';
import { snapshot, until } from '../harness/proc';
import { apiClient, createAll, lagSummary, networkPosts } from '../harness/stack';
import { idle } from '../harness/temporal';
import { DATABASE_URL, DRAIN_DEADLINE_MS, futureSlot, opt, TASK_QUEUE } from './settings';
import { storageMark } from './storage';

// Reschedules and unschedules through PATCH /v1/posts/{id}, then what went out read back (bench/README.md "population", 6. and 7.).

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

/** A post due within the run, not to be published before `notBeforeMs` (its due time, or its new time after a reschedule). */
export type Expected = { kind: 'A' | 'B' | 'C-moved' | 'moved-in'; notBeforeMs: number };

export type Outcome = Awaited<ReturnType<typeof readBack>>;

export async function readBack(
  mon: pg.Client,
  sim: Parameters<typeof networkPosts>[0],
  expected: Map<string, Expected>,
  unscheduled: Set<string>,
) {
  const { rows } = await mon.query<{ id: string; published_at: Date }>(
    `select id, published_at from posts where status = 'published' and published_at is not null`,
  );
  const publishedAt = new Map(rows.map((r) => [r.id, r.published_at.getTime()]));
  const { posts: net, byRef: perRef } = await networkPosts(sim);

  const lags: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const netLags: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const lostByKind: Record<string, number> = {};
  let lost = 0;
  let early = 0;
  for (const [id, e] of expected) {
    const at = publishedAt.get(id);
    const onNet = perRef.get(id);
    const slice = e.kind === 'A' || e.kind === 'B' ? e.kind : null;
    if (at === undefined || !onNet) {
      lost++;
      lostByKind[e.kind] = (lostByKind[e.kind] ?? 0) + 1;
      // A lost post counts with the deadline as its lag, so the percentiles stay a lower bound.
      if (slice) lags[slice].push(DRAIN_DEADLINE_MS);
      continue;
    }
    if (at < e.notBeforeMs || onNet.firstMs < e.notBeforeMs) early++;
    if (slice) {
      lags[slice].push(at - e.notBeforeMs);
      netLags[slice].push(onNet.firstMs - e.notBeforeMs);
    }
  }
  const seen = new Set<string>([...publishedAt.keys(), ...perRef.keys()]);
  return {
    lag: { A: lagSummary(lags.A), B: lagSummary(lags.B) },
    networkLag: { A: lagSummary(netLags.A), B: lagSummary(netLags.B) },
    lost,
    lostByKind,
    duplicated: [...perRef.values()].filter((e) => e.n > 1).length,
    publishedAfterUnschedule: [...unscheduled].filter((id) => seen.has(id)).length,
    publishedEarly: early,
    stray: [...seen].filter((id) => !expected.has(id) && !unscheduled.has(id)).length,
    networkPosts: net.length,
    publishedRows: rows.length,
  };
}

/** Sleeps to `dueMs`, then polls until every one of `ids` is published or the drain deadline passes; answers how many are. */
export async function drain(mon: pg.Client, ids: string[], dueMs: number, label: string): Promise<number> {
  if (Date.now() < dueMs) await sleep(dueMs - Date.now());
  let n = 0;
  const published = async () =>
    (await mon.query<{ n: number }>(`select count(*)::int as n from posts where id = any($1) and status = 'published'`, [ids])).rows[0]!.n;
  await until(async () => (n = await published()) >= ids.length || Date.now() > dueMs + DRAIN_DEADLINE_MS, DRAIN_DEADLINE_MS + 5_000, 500);
  // The lag from each post's own publish time: a drain called after its due time (the reschedule
  // phase's, once every PATCH is answered) would otherwise report when it looked.
  const { rows } = await mon.query<{ at: Date }>(`select published_at as at from posts where id = any($1) and status = 'published'`, [ids]);
  const lag = lagSummary(rows.map((r) => r.at.getTime() - dueMs));
  console.log(
    `• ${label}: ${n.toLocaleString('en-US')}/${ids.length.toLocaleString('en-US')} published, lag p50 ${lag.p50S.toFixed(1)} s / p99 ${lag.p99S.toFixed(1)} s / max ${lag.maxS.toFixed(1)} s (seen at t=${((Date.now() - dueMs) / 1000).toFixed(1)} s)`,
  );
  return n;
}
