import fs from 'node:fs';
import path from 'node:path';
import { prng, shuffle } from '../harness/content';
import { f0, f1, listEntries, mapValues, mean, mib, REPO_ROOT, s1, step, tally, writeResults } from '../harness/format';
import { diff, machineInfo, type CpuBreakdown } from '../harness/proc';
import { cutProfile, printProfile, summarizeProfile } from '../harness/profile';
import { lagSummary, networkPosts } from '../harness/stack';
import { lagAndMemory } from './baseline';
import { breakdown, compactHistory, PHASES, timelines } from './history';
import * as S from './settings';
import type { Bench, Run } from '../publishing';

// The publishing bench's figures (the posts table, the network and the workflow histories against
// each other and the targets), printed, with the worker's profile and the results file.

const { opt } = S;
const CPUS = machineInfo().cpus;
/** CPU over `seconds` in which `posts` were published: by group, per post, and other processes' share. */
const cpuFigures = (d: CpuBreakdown, seconds: number, posts: number) => ({
  machineBusy: d.machineBusy,
  cpuMs: d.cpuMs,
  usPerPost: mapValues(d.cpuMs, (ms) => (posts ? Math.round((ms * 1000) / posts) : 0)),
  otherShare: d.cpuMs.other! / (seconds * 1000 * CPUS),
});

/** Commits and rows written so far per database (pg_stat_database), the service's and Temporal's. */
export async function dbWrites({ mon, db, temporal }: Pick<Bench, 'mon' | 'db' | 'temporal'>) {
  const sql = `select datname, xact_commit::float8 as commits, (tup_inserted + tup_updated + tup_deleted)::float8 as rows
    from pg_stat_database where datname = any($1)`;
  const { rows } = await mon.query<{ datname: string; commits: number; rows: number }>(sql, [[db, ...temporal.databases]]);
  return Object.fromEntries(rows.map(({ datname, ...w }) => [datname, w]));
}

type Figures = Awaited<ReturnType<typeof analyse>>;

/** The posts table, the network and the workflow histories, against each other and the targets. */
async function analyse(b: Bench, r: Run) {
  const { dueMs, dueOf, killedAt, w2, expected } = r;
  const sql = 'select id, published_at, status, last_publish_error from posts where project_id = any($1)';
  type Row = { id: string; published_at: Date | null; status: string; last_publish_error: string | null };
  const rows = (await b.mon.query<Row>(sql, [b.s.projectIds])).rows.filter((row) => dueOf.has(row.id));
  const pubOf = new Map(rows.flatMap((row) => (row.published_at ? [[row.id, row.published_at.getTime()] as const] : [])));
  const published = rows.filter((row) => row.status === 'published' && row.published_at);
  const lagOf = new Map(published.map((row) => [row.id, row.published_at!.getTime() - dueOf.get(row.id)!]));
  const lost = rows.filter((row) => !lagOf.has(row.id));
  const lostErrors: Record<string, number> = {};
  for (const { last_publish_error: e } of lost) if (e) tally(lostErrors, e);
  const lags = [...lagOf.values()];
  const pubTimes = [...pubOf.values()].sort((x, y) => x - y);
  const lastPub = pubTimes.at(-1) ?? 0;
  // A post never published counts with the deadline as its lag, so the percentiles stay a lower bound rather than flattering.
  const lag = lagSummary([...lags, ...lost.map(() => opt.deadline * 1000)]);

  // The network's side: one post per reference, exactly once.
  const { posts, byRef } = await networkPosts(b.sim);
  const missing = [...dueOf.keys()].filter((id) => !byRef.has(id));
  const stray = posts.filter((p) => !p.reference || !dueOf.has(p.reference)).length;
  const publishedNotOnNetwork = missing.filter((id) => lagOf.has(id)).length;
  const network = { posts: posts.length, stray, missingOnNetwork: missing.length, publishedNotOnNetwork, counts: await b.sim.counts() };
  const reached = [...dueOf].flatMap(([id, due]) => (byRef.has(id) ? [{ ...byRef.get(id)!, due }] : []));
  const duplicated = reached.filter((e) => e.n > 1).length;

  // Where the time went: the publish workflow history of every post (or a random sample).
  const ids = [...lagOf.keys()];
  const sampleIds = S.HISTORY_SAMPLE < ids.length ? shuffle(ids, prng(7)).slice(0, S.HISTORY_SAMPLE) : ids;
  const t0 = Date.now();
  const traced = (id: string) => ({ workflowId: r.workflowIds.publish(id), postId: id, dueMs: dueOf.get(id)! });
  const hist = await timelines(b.client, sampleIds.map(traced));
  if (sampleIds.length) step(`read ${f0(hist.ok.length)} publish workflow histories in ${s1(Date.now() - t0)} s`);
  const byLag = sampleIds.toSorted((x, y) => lagOf.get(x)! - lagOf.get(y)!);
  const slowest = hist.ok.toSorted((x, y) => lagOf.get(y.postId)! - lagOf.get(x.postId)!).slice(0, Math.ceil(hist.ok.length / 100) || 1);
  // A publish activity held by the killed worker ran again after its timeout: those posts are "stranded".
  const retried = new Set(hist.ok.filter((t) => t.activityAttempts > 1).map((t) => t.postId));
  // A few raw histories (the first, the median and the last published; one never published) for reading by eye.
  const picks = [byLag[0], byLag[Math.floor(byLag.length / 2)], byLag.at(-1), [...retried][0], ...byLag.filter((_, i) => i % 997 === 5)];
  const dumpIds = [...new Set(picks.filter((x) => x !== undefined))].slice(0, opt['dump-histories']);
  if (lost.length && opt['dump-histories']) dumpIds.push(lost[0]!.id);
  const dumped: Record<string, unknown> = {};
  for (const id of dumpIds) {
    const events = await compactHistory(b.client, r.workflowIds.publish(id), dueOf.get(id)!).catch((err) => String(err));
    dumped[id] = { lagS: lagOf.has(id) ? lagOf.get(id)! / 1000 : 'not published', events };
  }

  // Phases: before the kill, the gap, after the restart.
  const sinceDue = (t: number | null | undefined) => (t ? (t - dueMs) / 1000 : null);
  const rate = (times: number[]) => (times.length > 1 ? times.length / ((times.at(-1)! - times[0]!) / 1000) : null);
  const firstAfterRestart = w2 ? (pubTimes.find((t) => t >= w2.startedAt) ?? null) : null;
  const beforeKill = killedAt ? pubTimes.filter((t) => t < killedAt) : pubTimes;
  const strandedPublished = [...retried].map((id) => pubOf.get(id)).filter((t): t is number => t !== undefined);
  const normalTimes = [...pubOf].flatMap(([id, t]) => (retried.has(id) ? [] : [t])).sort((x, y) => x - y);
  const throughput = {
    postsPerSecond: lastPub > 0 ? lags.length / ((lastPub - dueMs) / 1000) : 0,
    allPublishedAfterDueS: sinceDue(lastPub),
    beforeKill: killedAt ? rate(beforeKill) : null,
    afterRestart: firstAfterRestart ? rate(normalTimes.filter((t) => t >= firstAfterRestart)) : null,
  };
  const kill = killedAt && {
    atS: (killedAt - dueMs) / 1000,
    publishedAtKill: r.publishedAtKill,
    lastPublishBeforeKillS: sinceDue(beforeKill.at(-1)),
    restartStartedS: sinceDue(w2?.startedAt),
    restartReadyS: sinceDue(w2?.readyAt),
    firstPublishAfterRestartS: sinceDue(firstAfterRestart),
    publishedAfterRestart: firstAfterRestart ? pubTimes.filter((t) => t >= firstAfterRestart).length : 0,
    strandedByKill: hist.ok.length ? retried.size : null,
  };

  // CPU by window, from the nearest snapshots: due → kill, due → the last post not stranded.
  const groups = await r.groups();
  const nearest = (wall: number) => r.cpuSnaps.reduce((best, x) => (Math.abs(x.wall - wall) < Math.abs(best.wall - wall) ? x : best));
  const windowCpu = (from: number, to: number) => {
    const [a, z] = [nearest(from), nearest(to)];
    const d = z.wall > a.wall ? diff(a.snap, z.snap, groups) : null;
    if (!d) return null;
    const seconds = (z.wall - a.wall) / 1000;
    const posts = pubTimes.filter((t) => t >= a.wall && t < z.wall).length;
    const cores = mapValues(d.cpuMs, (v) => v / 1000 / seconds);
    return { fromS: (a.wall - dueMs) / 1000, toS: (z.wall - dueMs) / 1000, seconds, posts, cores, ...cpuFigures(d, seconds, posts) };
  };
  const bulkEnd = normalTimes.at(-1) ?? r.drainEnd;

  // Targets (issue 19): ratios to the baselines of this very run.
  const bare = r.baselines.find((x) => x.kind === 'bare-timer');
  const timerActivity = r.baselines.find((x) => x.kind === 'timer+activity');
  const drain = timerActivity ? throughput.postsPerSecond / timerActivity.drainPerS : null;
  const drainBare = bare ? throughput.postsPerSecond / bare.drainPerS : null;
  const p99Ratio = timerActivity && timerActivity.lag.p99S > 0 ? lag.p99S / timerActivity.lag.p99S : null;
  // Steady state: RSS flat = the last third of the drain peaks no more than 10 % above the first third.
  const rssWindow = (from: number, to: number) =>
    Math.max(0, ...r.workers.flatMap((w) => w.samples.filter((x) => x.t >= from && x.t < to).map((x) => x.rssKiB / 1024)));
  const third = (r.lastDue - dueMs) / 3;
  const firstThirdMiB = rssWindow(dueMs, dueMs + third);
  const lastThirdMiB = rssWindow(dueMs + 2 * third, r.lastDue + 1);
  const flat = firstThirdMiB > 0 && lastThirdMiB <= firstThirdMiB * 1.1;
  const rss = { peakMiB: Math.max(0, ...r.workers.map((w) => w.peakRssKiB / 1024)), firstThirdMiB, lastThirdMiB, flat };
  // Each target with the figure it applies to and whether it was met, as printed and as the results file records it.
  const targets = {
    p99Lag: S.STEADY
      ? { maxS: S.TARGET.steadyP99S, met: lag.p99S <= S.TARGET.steadyP99S }
      : p99Ratio !== null
        ? { maxRatioToBaseline: S.TARGET.p99VsBaseline, met: p99Ratio <= S.TARGET.p99VsBaseline }
        : { maxS: S.TARGET.p99S, met: lag.p99S < S.TARGET.p99S },
    drainVsTimerActivity: { min: S.TARGET.drainVsTimerActivity, met: drain === null || drain >= S.TARGET.drainVsTimerActivity },
    drainVsBareTimer: { aim: S.TARGET.drainVsBareTimerAim, met: drainBare === null ? null : drainBare >= S.TARGET.drainVsBareTimerAim },
    workerRss: S.STEADY ? { flat: true, met: flat } : { maxMiB: S.TARGET.peakRssMiB, met: rss.peakMiB <= S.TARGET.peakRssMiB },
    lost: { max: 0, met: lost.length === 0 },
    duplicated: { max: 0, met: duplicated === 0 },
  };

  // Database writes from the first create to here (the baselines ran before): the service's
  // database and, on the cluster, Temporal's two (docs/publishing.md "Capacity").
  const writesPerPost = Object.entries(await dbWrites(b)).map(([db, w]) => ({
    db,
    commits: (w.commits - (r.writes0[db]?.commits ?? 0)) / expected,
    rows: (w.rows - (r.writes0[db]?.rows ?? 0)) / expected,
  }));
  return {
    // As the results file records them.
    lag,
    networkLag: lagSummary(reached.map((e) => e.firstMs - e.due)),
    late: lags.filter((l) => l > opt['late-after'] * 1000).length,
    lost: lost.length,
    lostErrors,
    duplicated,
    network,
    throughput,
    kill,
    lagBreakdown: { all: breakdown(hist.ok), slowest: breakdown(slowest), historyReadErrors: hist.errors },
    dbActivityDuringDrain: mapValues(r.activity, (xs) => ({ mean: xs.length ? mean(xs) : 0, max: Math.max(0, ...xs) })),
    cpuSteadyBeforeKill: killedAt ? windowCpu(dueMs, killedAt) : null,
    cpuBulk: windowCpu(dueMs, bulkEnd),
    cpuDuringCreation: r.createCpu && cpuFigures(r.createCpu, r.created.durationMs / 1000, Math.max(1, expected)),
    ratios: { drainVsTimerActivity: drain, drainVsBareTimer: drainBare, p99VsTimerActivity: p99Ratio },
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
    machine: machineInfo(),
    // The flags, and the worker's settings as lib/config has read them.
    settings: {
      ...opt,
      posts: S.POSTS,
      spreadS: S.SPREAD_MS / 1000,
      kill: S.KILL,
      worker: { ...b.config.worker, heapLimitMiB: Math.round(b.heapLimitMiB) },
      dbPoolMax: b.config.dbPoolMax,
      database: b.db,
      redisDb: new URL(S.STACK.redisUrl).pathname.slice(1) || '0',
      taskQueue: b.taskQueue,
      dueAt: new Date(r.dueMs).toISOString(),
    },
    creation: r.summary,
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
  if (opt.strict && Object.values(enforced).some((t) => !t.met)) process.exitCode = 1;
}

const L = (label: string, value: string) => console.log(`  ${label.padEnd(44)}${value}`);
const ms = (x: number | null) => (x === null ? '—' : x >= 10_000 ? `${s1(x)} s` : `${Math.round(x)} ms`);
/** Seconds after the due time. */
const t = (x: number | null | undefined) => (x == null ? '—' : f1(x));
const met = (ok: boolean | null) => (ok ? 'MET' : 'MISSED');
const ok = (good: boolean) => (good ? 'OK' : 'FAIL');
const f2 = (x: number) => x.toFixed(2);
const list = (o: Record<string, number>, fmt: (v: number) => string) => listEntries(o, (k, v) => `${k} ${fmt(v)}`);
const note = (share: number) => (share >= 0.05 ? ` — NOTE: other processes took ${(share * 100).toFixed(0)}% of the machine` : '');
const lags = (l: { p50S: number; p99S: number; maxS: number }) => `${f1(l.p50S)} s / ${f1(l.p99S)} s / ${f1(l.maxS)} s`;

function printReport(r: Run, f: Figures) {
  const { lag, targets, kill, throughput, network } = f;
  const { created, dueMs, w2 } = r;
  const via = opt.create === 'api' ? 'POST /v1/posts (API process)' : 'insertPost + afterPostCommitted in-process';
  console.log(
    `\n${f0(r.expected)} posts due at ${new Date(dueMs).toISOString()}${S.SPREAD_MS ? ` (+0…${S.SPREAD_MS / 1000} s)` : ''} over ${opt.projects} account(s); created via ${via}`,
  );
  L(
    'creation',
    `${s1(created.durationMs)} s, ${f0(created.rate)} posts/s, p50 ${created.latencyMs.p50.toFixed(0)} ms / p99 ${created.latencyMs.p99.toFixed(0)} ms per create, ${created.errors} errors, done ${s1(r.finishedBeforeDueMs)} s before due`,
  );
  L('lag = published_at − due   p50 / p99 / max', `${lags(lag)}   (p90 ${f1(lag.p90S)} s, mean ${f1(lag.meanS)} s)`);
  L('  same, on the network (simulator receivedAt)', lags(f.networkLag));
  if ('maxS' in targets.p99Lag) L(`target p99 ${S.STEADY ? '≤' : '<'} ${targets.p99Lag.maxS} s`, met(targets.p99Lag.met));
  L(`late (published > ${opt['late-after']} s after due)`, `${f0(f.late)}`);
  const lostErrors = f.lost ? `  ${JSON.stringify(f.lostErrors)} (counted in the lag figures with ${opt.deadline} s)` : '';
  L(`lost (not published ${opt.deadline} s after due)`, `${f.lost}${lostErrors}   ${ok(targets.lost.met)}`);
  L(
    'duplicated (>1 network post per post id)',
    `${f.duplicated}   ${ok(targets.duplicated.met)}  (idempotent replays ${network.counts.replays}, create calls ${f0(network.counts.createCalls)}, stray network posts ${network.stray}, published but not on network ${network.publishedNotOnNetwork})`,
  );
  if (f.more.historyEvents !== null) L('history events per publish workflow (sampled)', f1(f.more.historyEvents));
  for (const w of f.more.writesPerPost)
    L(`  ${w.db} per post`, `${f1(w.commits)} commits, ${f1(w.rows)} rows written (inserted + updated + deleted)`);
  L(
    'throughput (published / (last − due))',
    `${f1(throughput.postsPerSecond)} posts/s; all published ${t(throughput.allPublishedAfterDueS)} s after due`,
  );
  if (throughput.beforeKill !== null)
    L('  before the kill / after the restart', `${f1(throughput.beforeKill)} posts/s / ${t(throughput.afterRestart)} posts/s`);
  if (kill) {
    L('kill', `t=${t(kill.atS)} s, ${f0(kill.publishedAtKill)} published (${f1((kill.publishedAtKill / r.expected) * 100)}%)`);
    const firstAfter = t(kill.firstPublishAfterRestartS);
    const startUp = w2?.readyAt ? s1(w2.readyAt - w2.startedAt) : '—';
    if (w2)
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
    const on = S.STACK.kind === 'cluster' ? 'cluster' : 'dev server';
    console.log(`  against the bare baselines of this run (same ${on}, same worker settings and count, no kill):`);
    for (const b of r.baselines) L(`  ${b.kind}`, `${f1(b.drainPerS)} workflows/s, ${lagAndMemory(b)}`);
    const { drainVsTimerActivity: drain, drainVsBareTimer: bare, p99VsTimerActivity: p99 } = f.ratios;
    const { drainVsTimerActivity: drainTarget, drainVsBareTimer: bareAim } = targets;
    if (drain !== null) L('  drain ÷ timer+activity drain', `${f2(drain)}×   target ≥ ${drainTarget.min}×  ${met(drainTarget.met)}`);
    if (bare !== null) L('  drain ÷ bare-timer drain', `${f2(bare)}×   aim ≥ ${bareAim.aim}×  ${met(bareAim.met)}`);
    if (p99 !== null) L('  lag p99 ÷ timer+activity p99', `${f2(p99)}×   target ≤ ${S.TARGET.p99VsBaseline}×  ${met(targets.p99Lag.met)}`);
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
  const mm = (k: string) => `${f1(a[k]!.mean)} / ${a[k]!.max}`;
  L(
    'bench DB backends during drain (mean / max)',
    `${mm('connections')} connected, ${mm('active')} active, ${mm('idleInTransaction')} idle in transaction, ${mm('lockWaits')} waiting on a lock`,
  );
  for (const [label, w] of [
    ['steady state: due → kill', f.cpuSteadyBeforeKill],
    ['bulk: due → last non-stranded post', f.cpuBulk],
  ] as const) {
    if (!w) continue;
    const busy = `machine busy ${(w.machineBusy * 100).toFixed(0)}%${note(w.otherShare)}`;
    L(`CPU, ${label}`, `t=${f1(w.fromS)}…${f1(w.toS)} s, ${f0(w.posts)} posts (${f1(w.posts / w.seconds)}/s), ${busy}`);
    L('  cores used', list(w.cores, f2));
    L('  CPU µs per published post', list(w.usPerPost, f0));
  }
  const c = f.cpuDuringCreation;
  if (c) L('CPU during creation, µs per post', list(c.usPerPost, f0) + note(c.otherShare));
}

/** The surviving worker's CPU profile, cut to the drain window it served, per thread. */
async function profileWorker(r: Run, f: Figures) {
  const last = r.workers.at(-1)!;
  if (!opt['worker-profile'] || last.exit) return null;
  await last.stop(20_000);
  const dir = S.profileDir(last.index);
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.cpuprofile') && !n.startsWith('drain-')) : [];
  if (!files.length) console.log(`  (no CPU profile found in ${path.relative(process.cwd(), dir)})`);
  const [from, to] = [Math.max(r.dueMs, last.readyAt ?? r.dueMs), f.bulkEnd];
  const window = {
    fromS: (from - r.dueMs) / 1000,
    toS: (to - r.dueMs) / 1000,
    posts: f.pubTimes.filter((x) => x >= from && x <= to).length,
  };
  const profiles = [];
  for (const name of files.sort()) {
    const file = path.join(dir, `drain-${name}`);
    cutProfile(path.join(dir, name), file, last.exitedAt!, from, to);
    // File names: CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main
    // thread (activities, SDK bridge); workflow code runs in one of the worker threads.
    const threadId = name.split('.')[4];
    const thread = threadId === '0' ? 'main thread' : `worker thread ${threadId}`;
    const summary = summarizeProfile(file, REPO_ROOT, 15);
    const { totalMs: sampledMs, byGroup, topSelf } = summary;
    if (!sampledMs) continue;
    const title = `worker #${last.index} ${thread}, t=${s1(from - r.dueMs)}…${s1(to - r.dueMs)} s, ${f0(window.posts)} posts published`;
    printProfile(`${title} (µs/req = µs per published post)`, summary, window.posts);
    const usPerPost = window.posts ? (sampledMs * 1000) / window.posts : null;
    profiles.push({ thread, window, sampledMs, usPerPost, byGroup: byGroup.slice(0, 20), topSelf, file: path.relative(REPO_ROOT, file) });
  }
  return profiles;
}
