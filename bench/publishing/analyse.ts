import { diff, machineInfo } from '../harness/proc';
import { prng } from '../harness/content';
import { f0, mean, s1, step } from '../harness/format';
import { breakdown, compactHistory, timelines, type PostTimeline } from './history';
import { lagSummary, networkPosts } from '../harness/stack';
import * as S from './settings';
import type { Bench, Run } from '../publishing';

const CPUS = machineInfo().cpus;

export type Figures = Awaited<ReturnType<typeof analyse>>;

const statsOf = (xs: number[]) => ({ mean: xs.length ? mean(xs) : 0, max: Math.max(0, ...xs) });
const mapEntries = <T, U>(o: Record<string, T>, f: (k: string, v: T) => U) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(k, v)]));
/** CPU milliseconds by group → µs per post. */
const perPost = (cpuMs: Record<string, number>, posts: number) =>
  mapEntries(cpuMs, (_, ms) => (posts ? Math.round((ms * 1000) / posts) : 0));

/** The posts table, the network and the workflow histories, against each other and the targets. */
export async function analyse(bench: Bench, r: Run) {
  const { dueMs, dueOf, killedAt, w2, expected } = r;
  const { rows } = await bench.mon.query<{ id: string; published_at: Date | null; status: string; last_publish_error: string | null }>(
    `select id, published_at, status, last_publish_error from posts where project_id = any($1)`,
    [bench.s.projectIds],
  );
  const lagOf = new Map<string, number>();
  const pubOf = new Map<string, number>();
  const lostIds: string[] = [];
  const lostErrors: Record<string, number> = {};
  for (const row of rows) {
    const due = dueOf.get(row.id);
    if (due === undefined) continue;
    if (row.published_at) pubOf.set(row.id, row.published_at.getTime());
    if (row.status === 'published' && row.published_at) lagOf.set(row.id, row.published_at.getTime() - due);
    else {
      lostIds.push(row.id);
      if (row.last_publish_error) lostErrors[row.last_publish_error] = (lostErrors[row.last_publish_error] ?? 0) + 1;
    }
  }
  const lags = [...lagOf.values()];
  const pubTimes = [...pubOf.values()].sort((a, b) => a - b);
  const lastPub = pubTimes.at(-1) ?? 0;
  // A post never published counts with the deadline as its lag, so the percentiles stay a lower bound rather than flattering.
  const lag = lagSummary([...lags, ...lostIds.map(() => S.opt.deadline * 1000)]);

  // The network's side: one post per reference, exactly once.
  const { posts: onNetwork, byRef } = await networkPosts(bench.sim);
  const stray = onNetwork.filter((p) => !p.reference || !dueOf.has(p.reference)).length;
  const network = { posts: onNetwork.length, stray, missingOnNetwork: 0, publishedNotOnNetwork: 0, counts: await bench.sim.counts() };
  let duplicated = 0;
  const networkLags: number[] = [];
  for (const [id, due] of dueOf) {
    const e = byRef.get(id);
    if (!e) {
      network.missingOnNetwork++;
      if (lagOf.has(id)) network.publishedNotOnNetwork++;
    } else {
      if (e.n > 1) duplicated++;
      networkLags.push(e.firstMs - due);
    }
  }

  // Where the time went: the publish workflow history of every post (or a random sample).
  const ids = [...lagOf.keys()];
  let sampleIds = ids;
  if (S.HISTORY_SAMPLE < ids.length) {
    const rand = prng(7);
    const set = new Set<string>();
    while (set.size < S.HISTORY_SAMPLE) set.add(ids[Math.floor(rand() * ids.length)]!);
    sampleIds = [...set];
  }
  let hist: { ok: PostTimeline[]; errors: number } = { ok: [], errors: 0 };
  if (sampleIds.length) {
    const t0 = Date.now();
    hist = await timelines(
      bench.tclient,
      sampleIds.map((id) => ({ workflowId: r.workflowIds.publish(id), postId: id, dueMs: dueOf.get(id)! })),
    );
    step(`read ${f0(hist.ok.length)} publish workflow histories in ${s1(Date.now() - t0)} s`);
  }
  const slowest = [...hist.ok]
    .sort((a, b) => lagOf.get(b.postId)! - lagOf.get(a.postId)!)
    .slice(0, Math.max(1, Math.ceil(hist.ok.length / 100)));
  // A publish activity held by the killed worker ran again after its timeout: those posts are "stranded".
  const retried = new Set(hist.ok.filter((t) => t.activityAttempts > 1).map((t) => t.postId));
  // A few raw histories (the first, the median and the last published; one never published) for reading by eye.
  const byLag = [...sampleIds].sort((a, b) => lagOf.get(a)! - lagOf.get(b)!);
  const dumpIds = [
    ...new Set([byLag[0], byLag[Math.floor(byLag.length / 2)], byLag.at(-1), [...retried][0], ...byLag.filter((_, i) => i % 997 === 5)]),
  ]
    .filter((x): x is string => !!x)
    .slice(0, S.opt['dump-histories']);
  if (lostIds.length && S.opt['dump-histories']) dumpIds.push(lostIds[0]!);
  const dumped: Record<string, unknown> = {};
  for (const id of dumpIds) {
    const events = await compactHistory(bench.tclient, r.workflowIds.publish(id), dueOf.get(id)!).catch((err) => String(err));
    dumped[id] = { lagS: lagOf.has(id) ? lagOf.get(id)! / 1000 : 'not published', events };
  }

  // Phases: before the kill, the gap, after the restart.
  const sinceDue = (t: number | null | undefined) => (t ? (t - dueMs) / 1000 : null);
  const firstAfterRestart = w2 ? (pubTimes.find((t) => t >= w2.startedAt) ?? null) : null;
  const beforeKillTimes = killedAt ? pubTimes.filter((t) => t < killedAt) : pubTimes;
  const lastBeforeKill = killedAt ? (beforeKillTimes.at(-1) ?? null) : null;
  const strandedPublished = [...retried].map((id) => pubOf.get(id)).filter((t): t is number => t !== undefined);
  const normalTimes = [...pubOf].filter(([id]) => !retried.has(id)).map(([, t]) => t);
  normalTimes.sort((a, b) => a - b);
  const rateBeforeKill =
    killedAt && lastBeforeKill && beforeKillTimes.length > 1 ? beforeKillTimes.length / ((lastBeforeKill - pubTimes[0]!) / 1000) : null;
  const afterRestartTimes = firstAfterRestart ? normalTimes.filter((t) => t >= firstAfterRestart) : [];
  const rateAfterRestart =
    afterRestartTimes.length > 1 ? afterRestartTimes.length / ((afterRestartTimes.at(-1)! - afterRestartTimes[0]!) / 1000) : null;
  const throughput = {
    postsPerSecond: lastPub > 0 ? lags.length / ((lastPub - dueMs) / 1000) : 0,
    allPublishedAfterDueS: sinceDue(lastPub),
    beforeKill: rateBeforeKill,
    afterRestart: rateAfterRestart,
  };
  const kill = killedAt
    ? {
        atS: (killedAt - dueMs) / 1000,
        publishedAtKill: r.publishedAtKill,
        lastPublishBeforeKillS: sinceDue(lastBeforeKill),
        restartStartedS: sinceDue(w2?.startedAt),
        restartReadyS: sinceDue(w2?.readyAt),
        firstPublishAfterRestartS: sinceDue(firstAfterRestart),
        publishedBeforeKill: beforeKillTimes.length,
        publishedAfterRestart: firstAfterRestart ? pubTimes.filter((t) => t >= firstAfterRestart).length : 0,
        strandedByKill: hist.ok.length ? retried.size : null,
      }
    : null;

  // CPU by window, from the nearest snapshots: the whole drain, due → kill, due → the last post not stranded.
  const groups = await r.groups();
  const snaps = r.cpuSnaps;
  const nearest = (wall: number) => snaps.reduce((best, x) => (Math.abs(x.wall - wall) < Math.abs(best.wall - wall) ? x : best), snaps[0]!);
  const windowCpu = (from: number, to: number) => {
    const [a, b] = [nearest(from), nearest(to)];
    const d = b.wall > a.wall ? diff(a.snap, b.snap, groups) : null;
    if (!d) return null;
    const seconds = (b.wall - a.wall) / 1000;
    const posts = pubTimes.filter((t) => t >= a.wall && t < b.wall).length;
    const otherShare = d.cpuMs.other! / (seconds * 1000 * CPUS);
    const cores = mapEntries(d.cpuMs, (_, v) => v / 1000 / seconds);
    return {
      fromS: (a.wall - dueMs) / 1000,
      toS: (b.wall - dueMs) / 1000,
      seconds,
      posts,
      machineBusy: d.machineBusy,
      otherShare,
      cores,
      usPerPost: perPost(d.cpuMs, posts),
    };
  };
  const bulkEnd = normalTimes.at(-1) ?? r.drainEnd;
  const cpu = diff(snaps[0]!.snap, snaps.at(-1)!.snap, groups);
  const drainS = (r.drainEnd - dueMs) / 1000;
  const cpuDuringDrain = cpu && {
    seconds: drainS,
    machineBusy: cpu.machineBusy,
    cpuMs: cpu.cpuMs,
    usPerPost: lags.length ? perPost(cpu.cpuMs, lags.length) : null,
    otherShare: cpu.cpuMs.other! / (drainS * 1000 * CPUS),
  };
  const c = r.createCpu;
  const cpuDuringCreation = c && {
    machineBusy: c.machineBusy,
    cpuMs: c.cpuMs,
    usPerPost: perPost(c.cpuMs, Math.max(1, expected)),
    otherShare: c.cpuMs.other! / ((r.created.durationMs / 1000) * 1000 * CPUS),
  };
  const drainActivity = r.activity.filter((a) => a.t >= dueMs);
  const stats = (k: keyof (typeof drainActivity)[number]) => statsOf(drainActivity.map((a) => a[k]));
  const act = {
    connections: stats('connections'),
    active: stats('active'),
    idleInTransaction: stats('idleInTx'),
    lockWaits: stats('lockWaits'),
  };

  // Targets (issue 19): ratios to the baselines of this very run.
  const bare = r.baselines.find((b) => b.kind === 'bare-timer');
  const timerActivity = r.baselines.find((b) => b.kind === 'timer+activity');
  const ratios = {
    drainVsTimerActivity: timerActivity ? throughput.postsPerSecond / timerActivity.drainPerS : null,
    drainVsBareTimer: bare ? throughput.postsPerSecond / bare.drainPerS : null,
    p99VsTimerActivity: timerActivity && timerActivity.lag.p99S > 0 ? lag.p99S / timerActivity.lag.p99S : null,
  };
  // Steady state: RSS flat = the last third of the drain peaks no more than 10 % above the first third.
  const rssWindow = (from: number, to: number) =>
    Math.max(0, ...r.workers.flatMap((w) => w.samples.filter((x) => x.t >= from && x.t < to).map((x) => x.rssKiB / 1024)));
  const third = (r.lastDue - dueMs) / 3;
  const firstThirdMiB = rssWindow(dueMs, dueMs + third);
  const lastThirdMiB = rssWindow(dueMs + 2 * third, r.lastDue + 1);
  const flat = firstThirdMiB > 0 && lastThirdMiB <= firstThirdMiB * 1.1;
  const rss = { peakMiB: Math.max(0, ...r.workers.map((w) => w.peakRssKiB / 1024)), firstThirdMiB, lastThirdMiB, flat };
  const { drainVsTimerActivity: drain, drainVsBareTimer: drainBare, p99VsTimerActivity: p99Ratio } = ratios;
  const p99 = S.STEADY
    ? { maxS: S.TARGET_STEADY_P99_S, met: lag.p99S <= S.TARGET_STEADY_P99_S }
    : p99Ratio !== null
      ? { maxRatioToBaseline: S.TARGET_P99_VS_BASELINE, met: p99Ratio <= S.TARGET_P99_VS_BASELINE }
      : { maxS: S.TARGET_P99_S, met: lag.p99S < S.TARGET_P99_S };
  // Each target with the figure it applies to and whether it was met, as printed and as the results file records it.
  const targets = {
    p99Lag: p99,
    drainVsTimerActivity: { min: S.TARGET_DRAIN_VS_TIMER_ACTIVITY, met: drain === null || drain >= S.TARGET_DRAIN_VS_TIMER_ACTIVITY },
    drainVsBareTimer: { aim: S.AIM_DRAIN_VS_BARE_TIMER, met: drainBare === null ? null : drainBare >= S.AIM_DRAIN_VS_BARE_TIMER },
    workerRss: S.STEADY ? { flat: true, met: flat } : { maxMiB: S.TARGET_PEAK_RSS_MIB, met: rss.peakMiB <= S.TARGET_PEAK_RSS_MIB },
    lost: { max: 0, met: lostIds.length === 0 },
    duplicated: { max: 0, met: duplicated === 0 },
  };

  // Database writes from the first create to here (the baselines ran before): the service's
  // database and, on the cluster, Temporal's two (docs/publishing.md "Capacity").
  const writesPerPost = mapEntries(await bench.dbWrites(), (db, w) => ({
    commits: (w.commits - (r.writes0[db]?.commits ?? 0)) / expected,
    rows: (w.rows - (r.writes0[db]?.rows ?? 0)) / expected,
  }));
  return {
    // As the results file records them.
    lag,
    networkLag: lagSummary(networkLags),
    late: lags.filter((l) => l > S.opt['late-after'] * 1000).length,
    lateAfterS: S.opt['late-after'],
    lost: lostIds.length,
    lostErrors,
    duplicated,
    network,
    throughput,
    kill,
    lagBreakdown: { all: breakdown(hist.ok), slowest: breakdown(slowest), historyReadErrors: hist.errors },
    dbActivityDuringDrain: act,
    cpuDuringDrain,
    cpuSteadyBeforeKill: killedAt ? windowCpu(dueMs, killedAt) : null,
    cpuBulk: windowCpu(dueMs, bulkEnd),
    cpuDuringCreation,
    ratios,
    rss,
    targets,
    // For the report only.
    more: { strandedPublished, historyEvents: hist.ok.length ? mean(hist.ok.map((t) => t.historyEvents)) : null, writesPerPost },
    dumped,
    pubTimes,
    bulkEnd,
  };
}
