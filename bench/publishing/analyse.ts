import { diff } from '../harness/proc';
import { prng } from '../harness/content';
import { compactHistory, timelines, type PostTimeline } from './history';
import { type WorkerRun } from './worker';
import { CPUS, lagSummary, median, pct, statsOf } from './measure';
import {
  AIM_DRAIN_VS_BARE_TIMER,
  DEADLINE_MS,
  DUMP_HISTORIES,
  HISTORY_SAMPLE,
  LATE_AFTER_MS,
  STEADY,
  TARGET_DRAIN_VS_TIMER_ACTIVITY,
  TARGET_P99_S,
  TARGET_P99_VS_BASELINE,
  TARGET_PEAK_RSS_MIB,
  TARGET_STEADY_P99_S,
} from './settings';
import { f0, s1, step } from '../harness/format';
import type { Bench, Run } from '../publishing';

export type Figures = Awaited<ReturnType<typeof analyse>>;

/** The posts table, the network and the workflow histories, against each other and the targets. */
export async function analyse(bench: Bench, state: Run) {
  // ── Results ───────────────────────────────────────────────────────────────────────────
  const rows = (
    await bench.mon.query<{ id: string; published_at: Date | null; status: string; last_publish_error: string | null }>(
      `select id, published_at, status, last_publish_error from posts where project_id = any($1)`,
      [bench.s.projectIds],
    )
  ).rows;
  const lags: number[] = [];
  const lagOf = new Map<string, number>();
  let lost = 0;
  const lostIds: string[] = [];
  let late = 0;
  let firstPub = Infinity;
  let lastPub = 0;
  const errorsSeen: Record<string, number> = {};
  for (const row of rows) {
    const due = state.dueOf.get(row.id);
    if (due === undefined) continue;
    if (row.status !== 'published' || !row.published_at) {
      lost++;
      lostIds.push(row.id);
      if (row.last_publish_error) errorsSeen[row.last_publish_error] = (errorsSeen[row.last_publish_error] ?? 0) + 1;
      continue;
    }
    const at = row.published_at.getTime();
    const lag = at - due;
    if (lag > LATE_AFTER_MS) late++;
    lags.push(lag);
    lagOf.set(row.id, lag);
    firstPub = Math.min(firstPub, at);
    lastPub = Math.max(lastPub, at);
  }
  // A post never published counts with the deadline as its lag, so the percentiles stay a lower bound rather than flattering.
  const lag = lagSummary([...lags, ...lostIds.map(() => DEADLINE_MS)]);

  // The network's side: one post per reference, exactly once.
  const onNetwork = await bench.sim.listPosts({ limit: 1_000_000 });
  const perRef = new Map<string, { n: number; receivedAt: number }>();
  for (const p of onNetwork.posts) {
    if (!p.reference) continue;
    const e = perRef.get(p.reference);
    if (e) e.n++;
    else perRef.set(p.reference, { n: 1, receivedAt: Date.parse(p.receivedAt) });
  }
  let duplicated = 0;
  let missingOnNetwork = 0;
  let publishedNotOnNetwork = 0;
  const networkLags: number[] = [];
  for (const [id, due] of state.dueOf) {
    const e = perRef.get(id);
    if (!e) {
      missingOnNetwork++;
      if (lagOf.has(id)) publishedNotOnNetwork++;
      continue;
    }
    if (e.n > 1) duplicated++;
    networkLags.push(e.receivedAt - due);
  }
  const stray = onNetwork.posts.filter((p) => !p.reference || !state.dueOf.has(p.reference)).length;
  const counts = await bench.sim.counts();

  // Phases: before the kill, the gap, after the restart.
  const w2r = state.w2 as WorkerRun | null;
  const pubTimes = rows
    .filter((r) => r.published_at && state.dueOf.has(r.id))
    .map((r) => r.published_at!.getTime())
    .sort((a, b) => a - b);
  const firstAfterRestart = w2r ? (pubTimes.find((t) => t >= w2r.startedAt) ?? null) : null;
  const beforeKill = state.killedAt ? pubTimes.filter((t) => t < state.killedAt!).length : pubTimes.length;
  const afterRestart = firstAfterRestart ? pubTimes.filter((t) => t >= firstAfterRestart).length : 0;
  const lastBeforeKill = state.killedAt ? (pubTimes.filter((t) => t < state.killedAt!).at(-1) ?? null) : null;
  // Where the time went: the publish workflow history of every post (or a random sample).
  const ids = [...lagOf.keys()];
  const sampleRand = prng(7);
  let sampleIds: string[] = ids;
  if (HISTORY_SAMPLE < ids.length) {
    const set = new Set<string>();
    while (set.size < HISTORY_SAMPLE) set.add(ids[Math.floor(sampleRand() * ids.length)]!);
    sampleIds = [...set];
  }
  const toItem = (id: string) => ({ workflowId: state.workflowIds.publish(id), postId: id, dueMs: state.dueOf.get(id)! });
  let hist: { ok: PostTimeline[]; errors: number } = { ok: [], errors: 0 };
  if (sampleIds.length) {
    const t0 = Date.now();
    hist = await timelines(bench.tclient, sampleIds.map(toItem));
    step(`read ${f0(hist.ok.length)} publish workflow histories in ${s1(Date.now() - t0)} s`);
  }
  const slowestN = Math.max(1, Math.ceil(hist.ok.length / 100));
  const histSlow = [...hist.ok].sort((a, b) => lagOf.get(b.postId)! - lagOf.get(a.postId)!).slice(0, slowestN);
  const breakdown = (tl: PostTimeline[]) => {
    const row = (f: (t: PostTimeline) => number | null) => ({
      p50: median(tl.map(f)),
      p99: pct(tl.map(f), 0.99),
      max: pct(tl.map(f), 1),
    });
    return {
      workflows: tl.length,
      notReadyAtDue: tl.filter((t) => t.timerStarted === null || t.timerStarted > 0).length,
      firstTaskStartedMs: row((t) => t.firstTaskStarted),
      timerFiredAfterDueMs: row((t) => t.timerFired),
      workflowTaskWaitMs: row((t) => t.wfTaskWait),
      workflowTaskRunMs: row((t) => t.wfTaskRun),
      activityScheduledAfterDueMs: row((t) => t.activityScheduled),
      activityQueueMs: row((t) => t.activityQueue),
      activityRunMs: row((t) => t.activityRun),
      closeWaitMs: row((t) => t.closeWait),
      activityRetried: tl.filter((t) => t.activityAttempts > 1).length,
      withStickyTimeout: tl.filter((t) => t.stickyTimeouts > 0).length,
      withStartToCloseTimeout: tl.filter((t) => t.startToCloseTimeouts > 0).length,
    };
  };
  const bd = breakdown(hist.ok);
  const bdSlow = breakdown(histSlow);
  const retried = new Set(hist.ok.filter((t) => t.activityAttempts > 1).map((t) => t.postId));
  // A few raw histories (the first, the median and the last published; one never published) for reading by eye.
  const byLag = [...sampleIds].sort((a, b) => lagOf.get(a)! - lagOf.get(b)!);
  const dumpIds = [
    ...new Set(
      [byLag[0], byLag[Math.floor(byLag.length / 2)], byLag.at(-1), [...retried][0], ...byLag.filter((_, i) => i % 997 === 5)].filter(
        (x): x is string => !!x,
      ),
    ),
  ].slice(0, DUMP_HISTORIES);
  if (lostIds.length && DUMP_HISTORIES) dumpIds.push(lostIds[0]!);
  const dumped: Record<string, unknown> = {};
  for (const id of dumpIds) {
    dumped[id] = {
      lagS: lagOf.has(id) ? lagOf.get(id)! / 1000 : 'not published',
      events: await compactHistory(bench.tclient, state.workflowIds.publish(id), state.dueOf.get(id)!).catch((err) => String(err)),
    };
  }

  // A publish activity held by the killed worker is retried only when its start-to-close
  // timeout (2 min, no heartbeat) expires: those posts are "stranded".
  const pubOf = new Map(rows.filter((r) => r.published_at && state.dueOf.has(r.id)).map((r) => [r.id, r.published_at!.getTime()]));
  const strandedPublished = [...retried].map((id) => pubOf.get(id)).filter((t): t is number => t !== undefined);
  const normalTimes = [...pubOf.entries()]
    .filter(([id]) => !retried.has(id))
    .map(([, t]) => t)
    .sort((a, b) => a - b);
  const throughput = lastPub > 0 ? lags.length / ((lastPub - state.dueMs) / 1000) : 0;
  const rateBeforeKill = state.killedAt && lastBeforeKill && beforeKill > 1 ? beforeKill / ((lastBeforeKill - firstPub) / 1000) : null;
  const afterRestartTimes = firstAfterRestart ? normalTimes.filter((t) => t >= firstAfterRestart) : [];
  const rateAfterRestart =
    afterRestartTimes.length > 1 ? afterRestartTimes.length / ((afterRestartTimes.at(-1)! - afterRestartTimes[0]!) / 1000) : null;

  const groupsNow = await state.pgGroups();
  const cpu = diff(state.cpuDrain0, state.cpuDrain1, groupsNow);
  state.cpuSnaps.push({ wall: state.drainEnd, snap: state.cpuDrain1 });
  const snapAt = (wall: number) =>
    state.killSnap && wall === state.killSnap.wall
      ? state.killSnap
      : state.cpuSnaps.reduce((best, x) => (Math.abs(x.wall - wall) < Math.abs(best.wall - wall) ? x : best), state.cpuSnaps[0]!);
  const windowCpu = (from: number, to: number) => {
    if (!state.cpuSnaps.length) return null;
    const a = snapAt(from);
    const b = snapAt(to);
    if (b.wall <= a.wall) return null;
    const d = diff(a.snap, b.snap, groupsNow);
    if (!d) return null;
    const secs = (b.wall - a.wall) / 1000;
    const posts = pubTimes.filter((t) => t >= a.wall && t < b.wall).length;
    const map = (f: (ms: number) => number) => Object.fromEntries(Object.entries(d.cpuMs).map(([k, v]) => [k, f(v)]));
    return {
      fromS: (a.wall - state.dueMs) / 1000,
      toS: (b.wall - state.dueMs) / 1000,
      seconds: secs,
      posts,
      machineBusy: d.machineBusy,
      otherShare: d.cpuMs.other! / (secs * 1000 * CPUS),
      cores: map((v) => v / 1000 / secs),
      usPerPost: map((v) => (posts ? Math.round((v * 1000) / posts) : 0)),
    };
  };
  const bulkEnd = normalTimes.at(-1) ?? state.drainEnd;
  const cpuSteady = state.killedAt ? windowCpu(state.dueMs, state.killedAt) : null;
  const cpuBulk = windowCpu(state.dueMs, bulkEnd);
  const drainS = (state.drainEnd - state.dueMs) / 1000;
  const cpuPerPost =
    cpu && lags.length ? Object.fromEntries(Object.entries(cpu.cpuMs).map(([k, ms]) => [k, Math.round((ms * 1000) / lags.length)])) : null;
  const createCpuPerPost = state.createCpu
    ? Object.fromEntries(Object.entries(state.createCpu.cpuMs).map(([k, ms]) => [k, Math.round((ms * 1000) / Math.max(1, state.expected))]))
    : null;
  const drainActivity = state.activity.filter((a) => a.t >= state.dueMs);
  const act = {
    connections: statsOf(drainActivity.map((a) => a.connections)),
    active: statsOf(drainActivity.map((a) => a.active)),
    idleInTransaction: statsOf(drainActivity.map((a) => a.idleInTx)),
    lockWaits: statsOf(drainActivity.map((a) => a.lockWaits)),
  };

  const lostMet = lost === 0;
  const dupMet = duplicated === 0;
  // Targets (issue 19): ratios to the baselines of this very run.
  const bare = state.baselines.find((b) => b.kind === 'bare-timer') ?? null;
  const timerActivity = state.baselines.find((b) => b.kind === 'timer+activity') ?? null;
  const peakRssMiB = Math.max(0, ...state.workers.map((w) => w.peakRssKiB / 1024));
  const drainVsTimerActivity = timerActivity ? throughput / timerActivity.drainPerS : null;
  const drainVsBare = bare ? throughput / bare.drainPerS : null;
  const p99VsBaseline = timerActivity && timerActivity.lag.p99S > 0 ? lag.p99S / timerActivity.lag.p99S : null;
  // Steady state: RSS flat = the last third of the drain peaks no more than 10 % above the first third.
  const rssWindow = (from: number, to: number) =>
    Math.max(0, ...state.workers.flatMap((w) => w.samples.filter((x) => x.t >= from && x.t < to).map((x) => x.rssKiB / 1024)));
  const third = (state.lastDue - state.dueMs) / 3;
  const rssFirstThirdMiB = rssWindow(state.dueMs, state.dueMs + third);
  const rssLastThirdMiB = rssWindow(state.dueMs + 2 * third, state.lastDue + 1);
  const rssFlat = rssFirstThirdMiB > 0 && rssLastThirdMiB <= rssFirstThirdMiB * 1.1;
  const p99Met = STEADY
    ? lag.p99S <= TARGET_STEADY_P99_S
    : p99VsBaseline !== null
      ? p99VsBaseline <= TARGET_P99_VS_BASELINE
      : lag.p99S < TARGET_P99_S;
  const drainMet = drainVsTimerActivity === null || drainVsTimerActivity >= TARGET_DRAIN_VS_TIMER_ACTIVITY;
  const rssMet = STEADY ? rssFlat : peakRssMiB <= TARGET_PEAK_RSS_MIB;
  // Each target with the figure it applies to and whether it was met, as printed and as the results file records it.
  const targets = {
    p99Lag: STEADY
      ? { maxS: TARGET_STEADY_P99_S, met: p99Met }
      : p99VsBaseline !== null
        ? { maxRatioToBaseline: TARGET_P99_VS_BASELINE, met: p99Met }
        : { maxS: TARGET_P99_S, met: p99Met },
    drainVsTimerActivity: { min: TARGET_DRAIN_VS_TIMER_ACTIVITY, met: drainMet },
    drainVsBareTimer: { aim: AIM_DRAIN_VS_BARE_TIMER, met: drainVsBare === null ? null : drainVsBare >= AIM_DRAIN_VS_BARE_TIMER },
    workerRss: STEADY ? { flat: true, met: rssMet } : { maxMiB: TARGET_PEAK_RSS_MIB, met: rssMet },
    lost: { max: 0, met: lostMet },
    duplicated: { max: 0, met: dupMet },
  };

  // Database writes from the first create to here (the baselines ran before): the service's
  // database and, on the cluster, Temporal's two (docs/publishing.md "Capacity").
  const writes1 = await bench.dbWrites();
  const writesPerPost = Object.fromEntries(
    Object.entries(writes1).map(([db, w]) => [
      db,
      {
        commits: (w.commits - (state.writes0[db]?.commits ?? 0)) / state.expected,
        rows: (w.rows - (state.writes0[db]?.rows ?? 0)) / state.expected,
      },
    ]),
  );
  const historyEvents = hist.ok.length ? hist.ok.reduce((a, t) => a + t.historyEvents, 0) / hist.ok.length : null;
  const nl = lagSummary(networkLags);
  return {
    lost,
    late,
    lastPub,
    errorsSeen,
    lag,
    onNetwork,
    duplicated,
    missingOnNetwork,
    publishedNotOnNetwork,
    networkLags,
    stray,
    counts,
    w2r,
    pubTimes,
    firstAfterRestart,
    beforeKill,
    afterRestart,
    lastBeforeKill,
    hist,
    bd,
    bdSlow,
    retried,
    dumpIds,
    dumped,
    strandedPublished,
    throughput,
    rateBeforeKill,
    rateAfterRestart,
    cpu,
    bulkEnd,
    cpuSteady,
    cpuBulk,
    drainS,
    cpuPerPost,
    createCpuPerPost,
    act,
    lostMet,
    dupMet,
    peakRssMiB,
    drainVsTimerActivity,
    drainVsBare,
    p99VsBaseline,
    rssFirstThirdMiB,
    rssLastThirdMiB,
    rssFlat,
    p99Met,
    drainMet,
    rssMet,
    targets,
    writesPerPost,
    historyEvents,
    nl,
  };
}
