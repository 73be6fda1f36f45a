import fs from 'node:fs';
import path from 'node:path';
import { diff, machineInfo } from '../harness/proc';
import { prng } from '../harness/content';
import { cutProfile, printProfile, summarizeProfile } from '../harness/profile';
import { f0, mean, mib, REPO_ROOT, RESULTS_DIR, s1, step, writeResults } from '../harness/format';
import { lagSummary, networkPosts } from '../harness/stack';
import { breakdown, compactHistory, PHASES, timelines, type PostTimeline } from './history';
import { lagAndMemory } from './baseline';
import * as S from './settings';
import type { Bench, Run } from '../publishing';

// The publishing bench's figures (the posts table, the network and the workflow histories against
// each other and the targets), printed, with the worker's profile and the results file.

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

export async function report(b: Bench, r: Run) {
  const f = await analyse(b, r);
  printReport(r, f);
  const workerProfiles = await profileWorker(r, f);
  const { more, dumped, pubTimes, bulkEnd, ...figures } = f;
  /** Every fourth sample of 250 ms, with its time after due in seconds. */
  const everySecond = <T extends { t: number }>(xs: T[], f: (x: T) => object) =>
    xs.filter((_, i) => i % 4 === 0).map((x) => ({ tS: Math.round((x.t - r.dueMs) / 100) / 10, ...f(x) }));
  const out = writeResults(S.RUN_NAME, {
    bench: 'publishing',
    finishedAt: new Date().toISOString(),
    wallSeconds: Math.round((Date.now() - b.startedAt) / 1000),
    machine: b.machine,
    settings: { ...S.resultSettings(b.config, b.heapLimitMiB), dueAt: new Date(r.dueMs).toISOString() },
    creation: { ...r.summary, cpuUsPerPost: f.cpuDuringCreation?.usPerPost ?? null },
    ...figures,
    workers: r.workers.map((w) => ({
      index: w.index,
      pid: w.pid,
      readyAfterS: w.readyAt ? (w.readyAt - w.startedAt) / 1000 : null,
      peakRssMiB: w.peakRssKiB / 1024,
      vmHwmMiB: w.hwmKiB / 1024,
      exit: w.exit,
      log: path.relative(REPO_ROOT, w.logFile),
      rssMiBEverySecond: everySecond(w.samples, (x) => ({ mib: Math.round(x.rssKiB / 1024) })),
    })),
    workerProfiles,
    otherProcessesShareAtStart: b.otherAtStart,
    progressEverySecond: everySecond(r.progress, (p) => ({ published: p.published })),
    baselines: r.baselines,
  });
  if (Object.keys(dumped).length) fs.writeFileSync(out.replace(/\.json$/, '.histories.json'), JSON.stringify(dumped, null, 1) + '\n');
  const logs = r.workers.map((w) => path.relative(process.cwd(), w.logFile)).join(', ');
  console.log(`\nresults: ${path.relative(process.cwd(), out)}; worker logs: ${logs}`);
  // The bare-timer drain is an aim, printed and not enforced.
  const { drainVsBareTimer: _aim, ...enforced } = f.targets;
  if (S.opt.strict && Object.values(enforced).some((t) => !t.met)) process.exitCode = 1;
}

const L = (label: string, value: string) => console.log(`  ${label.padEnd(44)}${value}`);
const ms = (x: number | null) => (x === null ? '—' : x >= 10_000 ? `${s1(x)} s` : `${Math.round(x)} ms`);
/** Seconds after the due time. */
const t = (x: number | null) => (x === null ? '—' : x.toFixed(1));
const met = (ok: boolean | null) => (ok ? 'MET' : 'MISSED');
const ok = (good: boolean) => (good ? 'OK' : 'FAIL');
const list = (o: Record<string, number>, fmt: (v: number) => string) =>
  Object.entries(o)
    .map(([k, v]) => `${k} ${fmt(v)}`)
    .join(', ');
const note = (share: number) => (share >= 0.05 ? ` — NOTE: other processes took ${(share * 100).toFixed(0)}% of the machine` : '');

function printReport(r: Run, f: Figures) {
  const { opt } = S;
  const { lag, networkLag: nl, targets, kill, throughput, network } = f;
  const { created, dueMs } = r;
  const via = opt.create === 'api' ? 'POST /v1/posts (API process)' : 'insertPost + afterPostCommitted in-process';
  console.log(
    `\n${f0(r.expected)} posts due at ${new Date(dueMs).toISOString()}${S.SPREAD_MS ? ` (+0…${S.SPREAD_MS / 1000} s)` : ''} over ${opt.projects} account(s); created via ${via}`,
  );
  L(
    'creation',
    `${s1(created.durationMs)} s, ${f0(created.rate)} posts/s, p50 ${created.latencyMs.p50.toFixed(0)} ms / p99 ${created.latencyMs.p99.toFixed(0)} ms per create, ${created.errors} errors, done ${s1(r.finishedBeforeDueMs)} s before due`,
  );
  const lags = (l: typeof lag) => `${l.p50S.toFixed(1)} s / ${l.p99S.toFixed(1)} s / ${l.maxS.toFixed(1)} s`;
  L('lag = published_at − due   p50 / p99 / max', `${lags(lag)}   (p90 ${lag.p90S.toFixed(1)} s, mean ${lag.meanS.toFixed(1)} s)`);
  L('  same, on the network (simulator receivedAt)', lags(nl));
  if ('maxS' in targets.p99Lag) L(`target p99 ${S.STEADY ? '≤' : '<'} ${targets.p99Lag.maxS} s`, met(targets.p99Lag.met));
  L(`late (published > ${opt['late-after']} s after due)`, `${f0(f.late)}`);
  const lostErrors = f.lost ? `  ${JSON.stringify(f.lostErrors)} (counted in the lag figures with ${opt.deadline} s)` : '';
  L(`lost (not published ${opt.deadline} s after due)`, `${f.lost}${lostErrors}   ${ok(targets.lost.met)}`);
  L(
    'duplicated (>1 network post per post id)',
    `${f.duplicated}   ${ok(targets.duplicated.met)}  (idempotent replays ${network.counts.replays}, create calls ${f0(network.counts.createCalls)}, stray network posts ${network.stray}, published but not on network ${network.publishedNotOnNetwork})`,
  );
  if (f.more.historyEvents !== null) L('history events per publish workflow (sampled)', f.more.historyEvents.toFixed(1));
  for (const [db, w] of Object.entries(f.more.writesPerPost))
    L(`  ${db} per post`, `${w.commits.toFixed(1)} commits, ${w.rows.toFixed(1)} rows written (inserted + updated + deleted)`);
  L(
    'throughput (published / (last − due))',
    `${throughput.postsPerSecond.toFixed(1)} posts/s; all published ${t(throughput.allPublishedAfterDueS)} s after due`,
  );
  if (throughput.beforeKill !== null)
    L(
      '  before the kill / after the restart',
      `${throughput.beforeKill.toFixed(1)} posts/s / ${throughput.afterRestart?.toFixed(1) ?? '—'} posts/s`,
    );
  if (kill) {
    L('kill', `t=${t(kill.atS)} s, ${f0(kill.publishedAtKill)} published (${((kill.publishedAtKill / r.expected) * 100).toFixed(1)}%)`);
    const startUp = r.w2?.readyAt ? s1(r.w2.readyAt - r.w2.startedAt) : '—';
    const firstAfter = t(kill.firstPublishAfterRestartS);
    if (r.w2)
      L(
        'restart',
        `started t=${t(kill.restartStartedS)} s, polling t=${t(kill.restartReadyS)} s (start-up ${startUp} s), first publish t=${firstAfter} s`,
      );
    L('  no publishes between', `t=${t(kill.lastPublishBeforeKillS)} s and t=${firstAfter} s`);
    const stranded = f.more.strandedPublished;
    const when = stranded.length ? `, published t=${s1(Math.min(...stranded) - dueMs)}…${s1(Math.max(...stranded) - dueMs)} s` : '';
    if (kill.strandedByKill !== null)
      L(
        '  stranded by the kill',
        `${kill.strandedByKill} posts whose publishPost ran again after its 2 min start-to-close timeout (attempt > 1)${when}`,
      );
  }
  if (r.baselines.length) {
    console.log(
      `  against the bare baselines of this run (same ${S.CLUSTER ? 'cluster' : 'dev server'}, same worker settings and count, no kill):`,
    );
    for (const b of r.baselines) L(`  ${b.kind}`, `${b.drainPerS.toFixed(1)} workflows/s, ${lagAndMemory(b)}`);
    const { drainVsTimerActivity: drain, drainVsBareTimer: bare, p99VsTimerActivity: p99 } = f.ratios;
    const { drainVsTimerActivity: drainTarget, drainVsBareTimer: bareAim } = targets;
    if (drain !== null) L('  drain ÷ timer+activity drain', `${drain.toFixed(2)}×   target ≥ ${drainTarget.min}×  ${met(drainTarget.met)}`);
    if (bare !== null) L('  drain ÷ bare-timer drain', `${bare.toFixed(2)}×   aim ≥ ${bareAim.aim}×  ${met(bareAim.met)}`);
    if (p99 !== null)
      L('  lag p99 ÷ timer+activity p99', `${p99.toFixed(2)}×   target ≤ ${S.TARGET_P99_VS_BASELINE}×  ${met(targets.p99Lag.met)}`);
  }
  const rss = targets.workerRss;
  if ('maxMiB' in rss) L(`worker peak RSS ≤ ${rss.maxMiB} MiB`, `${f.rss.peakMiB.toFixed(0)} MiB   ${met(rss.met)}`);
  else
    L(
      'worker RSS flat (last third ≤ 1.1 × first third)',
      `${f.rss.firstThirdMiB.toFixed(0)} MiB → ${f.rss.lastThirdMiB.toFixed(0)} MiB   ${met(rss.met)}`,
    );
  for (const w of r.workers)
    L(
      `worker #${w.index} pid ${w.pid} peak RSS (VmHWM)`,
      `${mib(w.peakRssKiB)} (${mib(w.hwmKiB)}); ready ${w.readyAt ? s1(w.readyAt - w.startedAt) : '—'} s after spawn; ${w.exit ? `exit ${w.exit.signal ?? w.exit.code}` : 'running'}`,
    );
  const { all: bd, slowest } = f.lagBreakdown;
  if (bd.workflows) {
    console.log(
      `  where the lag went — publish workflow histories of ${f0(bd.workflows)} posts | the slowest ${slowest.workflows}; p50 / p99 | p50 / max:`,
    );
    const first = bd.firstTaskStartedMs;
    const notReady = bd.notReadyAtDue
      ? ` — their workflow's first task started p50 ${ms(first.p50)} / max ${ms(first.max)} relative to due`
      : '';
    L('  not ready at due (not armed yet)', `${f0(bd.notReadyAtDue)} posts${notReady}`);
    for (const key of Object.keys(PHASES) as (keyof typeof PHASES)[])
      L(`  ${PHASES[key][0]}`, `${ms(bd[key].p50)} / ${ms(bd[key].p99)}   | ${ms(slowest[key].p50)} / ${ms(slowest[key].max)}`);
    L(
      '  workflow task timed out after the timer',
      `${f0(bd.withStickyTimeout)} posts on a sticky queue (not picked up within the 10 s sticky schedule-to-start timeout), ${f0(bd.withStartToCloseTimeout)} held by a dead worker`,
    );
  }
  const a = f.dbActivityDuringDrain;
  const mm = (s: { mean: number; max: number }) => `${s.mean.toFixed(1)} / ${s.max}`;
  L(
    'bench DB backends during drain (mean / max)',
    `${mm(a.connections)} connected, ${mm(a.active)} active, ${mm(a.idleInTransaction)} idle in transaction, ${mm(a.lockWaits)} waiting on a lock`,
  );
  for (const [label, w] of [
    ['steady state: due → kill', f.cpuSteadyBeforeKill],
    ['bulk: due → last non-stranded post', f.cpuBulk],
  ] as const) {
    if (!w) continue;
    const busy = `machine busy ${(w.machineBusy * 100).toFixed(0)}%${note(w.otherShare)}`;
    L(
      `CPU, ${label}`,
      `t=${w.fromS.toFixed(1)}…${w.toS.toFixed(1)} s, ${f0(w.posts)} posts (${(w.posts / w.seconds).toFixed(1)}/s), ${busy}`,
    );
    L(
      '  cores used',
      list(w.cores, (v) => v.toFixed(2)),
    );
    L('  CPU µs per published post', list(w.usPerPost, f0));
  }
  const c = f.cpuDuringCreation;
  if (c) L('CPU during creation, µs per post', list(c.usPerPost, f0) + note(c.otherShare));
}

/** The surviving worker's CPU profile, cut to the drain window it served, per thread. */
async function profileWorker(r: Run, f: Figures) {
  const last = r.workers.at(-1)!;
  if (!S.opt['worker-profile'] || last.exit) return null;
  await last.stop(20_000);
  const dir = path.join(RESULTS_DIR, 'profiles', `${S.RUN_NAME}-worker-${last.index}`);
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.cpuprofile') && !n.startsWith('drain-')) : [];
  if (!files.length) console.log(`  (no CPU profile found in ${path.relative(process.cwd(), dir)})`);
  const from = Math.max(r.dueMs, last.readyAt ?? r.dueMs);
  const to = f.bulkEnd;
  const window = {
    fromS: (from - r.dueMs) / 1000,
    toS: (to - r.dueMs) / 1000,
    posts: f.pubTimes.filter((x) => x >= from && x <= to).length,
  };
  const profiles = [];
  for (const file of files.sort()) {
    const out = path.join(dir, `drain-${file}`);
    cutProfile(path.join(dir, file), out, last.exitedAt!, from, to);
    // File names: CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main
    // thread (activities, SDK bridge); workflow code runs in one of the worker threads.
    const threadId = file.split('.')[4];
    const thread = threadId === '0' ? 'main thread' : `worker thread ${threadId}`;
    const summary = summarizeProfile(out, REPO_ROOT, 15);
    const sampledMs = summary.totalMs;
    if (!sampledMs) continue;
    const title = `worker #${last.index} ${thread}, t=${s1(from - r.dueMs)}…${s1(to - r.dueMs)} s, ${f0(window.posts)} posts published`;
    printProfile(`${title} (µs/req = µs per published post)`, summary, window.posts);
    profiles.push({
      thread,
      window,
      sampledMs,
      usPerPost: window.posts ? (sampledMs * 1000) / window.posts : null,
      byGroup: summary.byGroup.slice(0, 20),
      topSelf: summary.topSelf,
      file: path.relative(REPO_ROOT, summary.file),
    });
  }
  return profiles;
}
