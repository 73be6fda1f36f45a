import fs from 'node:fs';
import path from 'node:path';
import { cutProfile, printProfile, summarizeProfile } from '../harness/profile';
import { f0, mib, REPO_ROOT, RESULTS_DIR, s1, writeResults } from '../harness/format';
import { analyse, type Figures } from './analyse';
import { PHASES } from './history';
import { lagAndMemory } from './baseline';
import * as S from './settings';
import type { Bench, Run } from '../publishing';

// The publishing bench's report: the figures printed, the worker's profile, the results file.

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
    settings: { ...S.resultSettings(b.config, b.heapLimitMiB), dueAt: new Date(r.dueMs).toISOString(), dbPoolMax: b.config.dbPoolMax },
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
    mode: S.opt.mode,
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
