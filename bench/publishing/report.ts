import fs from 'node:fs';
import path from 'node:path';
import { printProfile, summarizeProfile, type ProfileSummary } from '../harness/profile';
import { cutProfile } from '../harness/profile';
import { CPUS } from './measure';
import {
  CLUSTER,
  CREATE,
  DEADLINE_MS,
  LATE_AFTER_MS,
  MODE,
  PILOT,
  PROJECTS,
  RESULTS_DIR,
  RESULT_SETTINGS,
  ROOT,
  SPREAD_MS,
  STEADY,
  TARGET_P99_VS_BASELINE,
  WORKER_PROFILE,
  opt,
} from './settings';
import { f0, mib, s1 } from '../harness/format';
import type { Bench, Run } from '../publishing';
import { analyse, type Figures } from './analyse';

// The publishing bench's report: the figures printed, the worker's profile, the results file.

export type WorkerProfile = {
  thread: string;
  window: { fromS: number; toS: number; posts: number };
  sampledMs: number;
  summary: ProfileSummary;
};

export async function report(b: Bench, r: Run) {
  const f = await analyse(b, r);
  printReport(r, f);
  writeResults(b, r, f, await profileWorker(r, f));
}

export function printReport(r: Run, f: Figures) {
  // ── Report ────────────────────────────────────────────────────────────────────────────
  const L = (label: string, value: string) => console.log(`  ${label.padEnd(44)}${value}`);
  const ms = (x: number | null) => (x === null ? '—' : x >= 10_000 ? `${s1(x)} s` : `${Math.round(x)} ms`);
  console.log(
    `\n${f0(r.expected)} posts due at ${new Date(r.dueMs).toISOString()}${SPREAD_MS ? ` (+0…${SPREAD_MS / 1000} s)` : ''} over ${PROJECTS} account(s); created via ${CREATE === 'api' ? 'POST /v1/posts (API process)' : 'insertPost + afterPostCommitted in-process'}`,
  );
  L(
    'creation',
    `${s1(r.created.durationMs)} s, ${f0(r.created.rate)} posts/s, p50 ${r.created.latencyMs.p50.toFixed(0)} ms / p99 ${r.created.latencyMs.p99.toFixed(0)} ms per create, ${r.created.errors} errors, done ${s1(r.finishedBeforeDueMs)} s before due`,
  );
  L(
    'lag = published_at − due   p50 / p99 / max',
    `${f.lag.p50S.toFixed(1)} s / ${f.lag.p99S.toFixed(1)} s / ${f.lag.maxS.toFixed(1)} s   (p90 ${f.lag.p90S.toFixed(1)} s, mean ${f.lag.meanS.toFixed(1)} s)`,
  );
  L('  same, on the network (simulator receivedAt)', `${f.nl.p50S.toFixed(1)} s / ${f.nl.p99S.toFixed(1)} s / ${f.nl.maxS.toFixed(1)} s`);
  const p99Target = f.targets.p99Lag;
  if ('maxS' in p99Target) L(`target p99 ${STEADY ? '≤' : '<'} ${p99Target.maxS} s`, p99Target.met ? 'MET' : 'MISSED');
  L(`late (published > ${LATE_AFTER_MS / 1000} s after due)`, `${f0(f.late)}`);
  L(
    `lost (not published ${DEADLINE_MS / 1000} s after due)`,
    `${f.lost}${f.lost ? `  ${JSON.stringify(f.errorsSeen)} (counted in the lag figures with ${DEADLINE_MS / 1000} s)` : ''}   ${f.lostMet ? 'OK' : 'FAIL'}`,
  );
  L(
    'duplicated (>1 network post per post id)',
    `${f.duplicated}   ${f.dupMet ? 'OK' : 'FAIL'}  (idempotent replays ${f.counts.replays}, create calls ${f0(f.counts.createCalls)}, stray network posts ${f.stray}, published but not on network ${f.publishedNotOnNetwork})`,
  );
  if (f.historyEvents !== null) L('history events per publish workflow (sampled)', f.historyEvents.toFixed(1));
  for (const [db, w] of Object.entries(f.writesPerPost))
    L(`  ${db} per post`, `${w.commits.toFixed(1)} commits, ${w.rows.toFixed(1)} rows written (inserted + updated + deleted)`);
  L('throughput (published / (last − due))', `${f.throughput.toFixed(1)} posts/s; all published ${s1(f.lastPub - r.dueMs)} s after due`);
  if (f.rateBeforeKill !== null)
    L('  before the kill / after the restart', `${f.rateBeforeKill.toFixed(1)} posts/s / ${f.rateAfterRestart?.toFixed(1) ?? '—'} posts/s`);
  if (r.killedAt) {
    L(
      'kill',
      `t=${s1(r.killedAt - r.dueMs)} s, ${f0(r.publishedAtKill)} published (${((r.publishedAtKill / r.expected) * 100).toFixed(1)}%)`,
    );
    if (f.w2r)
      L(
        'restart',
        `started t=${s1(f.w2r.startedAt - r.dueMs)} s, polling t=${f.w2r.readyAt ? s1(f.w2r.readyAt - r.dueMs) : '—'} s (start-up ${f.w2r.readyAt ? s1(f.w2r.readyAt - f.w2r.startedAt) : '—'} s), first publish t=${f.firstAfterRestart ? s1(f.firstAfterRestart - r.dueMs) : '—'} s`,
      );
    L(
      '  no publishes between',
      `t=${f.lastBeforeKill ? s1(f.lastBeforeKill - r.dueMs) : '—'} s and t=${f.firstAfterRestart ? s1(f.firstAfterRestart - r.dueMs) : '—'} s`,
    );
    if (f.hist.ok.length)
      L(
        '  stranded by the kill',
        `${f.retried.size} posts whose publishPost ran again after its 2 min start-to-close timeout (attempt > 1)${f.strandedPublished.length ? `, published t=${s1(Math.min(...f.strandedPublished) - r.dueMs)}…${s1(Math.max(...f.strandedPublished) - r.dueMs)} s` : ''}`,
      );
  }
  if (r.baselines.length) {
    console.log(
      `  against the bare baselines of this run (same ${CLUSTER ? 'cluster' : 'dev server'}, same worker settings and count, no kill):`,
    );
    for (const b of r.baselines)
      L(
        `  ${b.kind}`,
        `${b.drainPerS.toFixed(1)} workflows/s, lag p50 ${b.lag.p50S.toFixed(1)} s / p99 ${b.lag.p99S.toFixed(1)} s, worker peak RSS ${b.workerPeakRssMiB.toFixed(0)} MiB`,
      );
    if (f.drainVsTimerActivity !== null)
      L(
        '  drain ÷ timer+activity drain',
        `${f.drainVsTimerActivity.toFixed(2)}×   target ≥ ${f.targets.drainVsTimerActivity.min}×  ${f.drainMet ? 'MET' : 'MISSED'}`,
      );
    if (f.drainVsBare !== null)
      L(
        '  drain ÷ bare-timer drain',
        `${f.drainVsBare.toFixed(2)}×   aim ≥ ${f.targets.drainVsBareTimer.aim}×  ${f.targets.drainVsBareTimer.met ? 'MET' : 'MISSED'}`,
      );
    if (f.p99VsBaseline !== null)
      L(
        '  lag p99 ÷ timer+activity p99',
        `${f.p99VsBaseline.toFixed(2)}×   target ≤ ${TARGET_P99_VS_BASELINE}×  ${f.p99Met ? 'MET' : 'MISSED'}`,
      );
  }
  const rssTarget = f.targets.workerRss;
  if ('maxMiB' in rssTarget)
    L(`worker peak RSS ≤ ${rssTarget.maxMiB} MiB`, `${f.peakRssMiB.toFixed(0)} MiB   ${f.rssMet ? 'MET' : 'MISSED'}`);
  else
    L(
      'worker RSS flat (last third ≤ 1.1 × first third)',
      `${f.rssFirstThirdMiB.toFixed(0)} MiB → ${f.rssLastThirdMiB.toFixed(0)} MiB   ${f.rssMet ? 'MET' : 'MISSED'}`,
    );
  for (const w of r.workers)
    L(
      `worker #${w.index} pid ${w.pid} peak RSS (VmHWM)`,
      `${mib(w.peakRssKiB)} (${mib(w.hwmKiB)}); ready ${w.readyAt ? s1(w.readyAt - w.startedAt) : '—'} s after spawn; ${w.exit ? `exit ${w.exit.signal ?? w.exit.code}` : 'running'}`,
    );
  if (f.bd.workflows) {
    console.log(
      `  where the lag went — publish workflow histories of ${f0(f.bd.workflows)} posts | the slowest ${f.bdSlow.workflows}; p50 / p99 | p50 / max:`,
    );
    const B = (label: string, a: { p50: number | null; p99: number | null }, b: { p50: number | null; max: number | null }) =>
      L(`  ${label}`, `${ms(a.p50)} / ${ms(a.p99)}   | ${ms(b.p50)} / ${ms(b.max)}`);
    L(
      '  not ready at due (not armed yet)',
      `${f0(f.bd.notReadyAtDue)} posts${f.bd.notReadyAtDue ? ` — their workflow's first task started p50 ${ms(f.bd.firstTaskStartedMs.p50)} / max ${ms(f.bd.firstTaskStartedMs.max)} relative to due` : ''}`,
    );
    B('timer / start delay fired (after due)', f.bd.timerFiredAfterDueMs, f.bdSlow.timerFiredAfterDueMs);
    B('→ workflow task started (queue wait)', f.bd.workflowTaskWaitMs, f.bdSlow.workflowTaskWaitMs);
    B('  workflow task run', f.bd.workflowTaskRunMs, f.bdSlow.workflowTaskRunMs);
    B('publishPost scheduled (after due)', f.bd.activityScheduledAfterDueMs, f.bdSlow.activityScheduledAfterDueMs);
    B('→ publishPost started (last attempt)', f.bd.activityQueueMs, f.bdSlow.activityQueueMs);
    B('  publishPost run (pool + tx + call)', f.bd.activityRunMs, f.bdSlow.activityRunMs);
    B('→ workflow completed', f.bd.closeWaitMs, f.bdSlow.closeWaitMs);
    L(
      '  workflow task timed out after the timer',
      `${f0(f.bd.withStickyTimeout)} posts on a sticky queue (not picked up within the 10 s sticky schedule-to-start timeout), ${f0(f.bd.withStartToCloseTimeout)} held by a dead worker`,
    );
  }
  L(
    'bench DB backends during drain (mean / max)',
    `${f.act.connections.mean.toFixed(1)} / ${f.act.connections.max} connected, ${f.act.active.mean.toFixed(1)} / ${f.act.active.max} active, ${f.act.idleInTransaction.mean.toFixed(1)} / ${f.act.idleInTransaction.max} idle in transaction, ${f.act.lockWaits.mean.toFixed(1)} / ${f.act.lockWaits.max} waiting on a lock`,
  );
  for (const [label, w] of [
    ['steady state: due → kill', f.cpuSteady],
    ['bulk: due → last non-stranded post', f.cpuBulk],
  ] as const) {
    if (!w) continue;
    L(
      `CPU, ${label}`,
      `t=${w.fromS.toFixed(1)}…${w.toS.toFixed(1)} s, ${f0(w.posts)} posts (${(w.posts / w.seconds).toFixed(1)}/s), machine busy ${(w.machineBusy * 100).toFixed(0)}%${w.otherShare >= 0.05 ? ` — NOTE: other processes took ${(w.otherShare * 100).toFixed(0)}% of the machine` : ''}`,
    );
    L(
      '  cores used',
      Object.entries(w.cores)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(', '),
    );
    L(
      '  CPU µs per published post',
      Object.entries(w.usPerPost)
        .map(([k, v]) => `${k} ${f0(v)}`)
        .join(', '),
    );
  }
  if (r.createCpu && f.createCpuPerPost) {
    const share = r.createCpu.cpuMs.other! / ((r.created.durationMs / 1000) * 1000 * CPUS);
    L(
      'CPU during creation, µs per post',
      Object.entries(f.createCpuPerPost)
        .map(([k, v]) => `${k} ${f0(v)}`)
        .join(', ') + (share >= 0.05 ? ` — NOTE: other processes took ${(share * 100).toFixed(0)}% of the machine` : ''),
    );
  }
}

/** The surviving worker's CPU profile, cut to the drain window it served. */
export async function profileWorker(r: Run, f: Figures): Promise<WorkerProfile[] | null> {
  // The surviving worker's CPU profile, cut to the drain window it served.
  let profiles: WorkerProfile[] | null = null;
  const last = r.workers.at(-1)!;
  if (WORKER_PROFILE && !last.exit) {
    await last.stop(20_000);
    const dir = path.join(RESULTS_DIR, 'profiles', `publishing${opt.tag ? `-${opt.tag}` : ''}-worker-${last.index}`);
    const files = fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.cpuprofile') && !f.startsWith('drain-'))
          .sort()
      : [];
    const from = Math.max(r.dueMs, last.readyAt ?? r.dueMs);
    const to = f.bulkEnd;
    const posts = f.pubTimes.filter((x) => x >= from && x <= to).length;
    profiles = [];
    for (const f of files) {
      const out = path.join(dir, `drain-${f}`);
      cutProfile(path.join(dir, f), out, last.exitedAt!, from, to);
      // File names: CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main
      // thread (activities, SDK bridge); workflow code runs in one of the worker threads.
      const thread = f.split('.')[4] === '0' ? 'main thread' : `worker thread ${f.split('.')[4]}`;
      const summary = summarizeProfile(out, ROOT, 15);
      const sampledMs = summary.totalMs;
      if (!sampledMs) continue;
      profiles.push({ thread, window: { fromS: (from - r.dueMs) / 1000, toS: (to - r.dueMs) / 1000, posts }, sampledMs, summary });
      printProfile(
        `worker #${last.index} ${thread}, t=${s1(from - r.dueMs)}…${s1(to - r.dueMs)} s, ${f0(posts)} posts published (µs/req = µs per published post)`,
        summary,
        posts,
      );
    }
    if (!files.length) console.log(`  (no CPU profile found in ${path.relative(process.cwd(), dir)})`);
  }
  return profiles;
}

export function writeResults(b: Bench, r: Run, f: Figures, profiles: WorkerProfile[] | null) {
  const results = {
    bench: 'publishing',
    finishedAt: new Date().toISOString(),
    wallSeconds: Math.round((Date.now() - b.startedAt) / 1000),
    machine: b.machine,
    settings: { ...RESULT_SETTINGS, dueAt: new Date(r.dueMs).toISOString(), dbPoolMax: b.DB_POOL },
    creation: {
      pilot: { posts: PILOT, rate: r.pilot.rate, latencyMs: r.pilot.latencyMs },
      estimateS: r.estimateMs / 1000,
      durationS: r.created.durationMs / 1000,
      rate: r.created.rate,
      latencyMs: r.created.latencyMs,
      errors: r.created.errors,
      errorSamples: r.created.errorSamples,
      finishedBeforeDueS: r.finishedBeforeDueMs / 1000,
      unsyncedWorkflows: r.unsynced,
      pilotReadyRate: r.readyRate,
      allReadyBeforeDueS: r.readyAt ? (r.dueMs - r.readyAt) / 1000 : null,
      tasksQueuedAtDue: r.backlogAtDue,
      cpuUsPerPost: f.createCpuPerPost,
    },
    lag: f.lag,
    networkLag: f.nl,
    late: f.late,
    lateAfterS: LATE_AFTER_MS / 1000,
    lost: f.lost,
    lostErrors: f.errorsSeen,
    duplicated: f.duplicated,
    network: {
      posts: f.onNetwork.total,
      stray: f.stray,
      missingOnNetwork: f.missingOnNetwork,
      publishedNotOnNetwork: f.publishedNotOnNetwork,
      counts: f.counts,
    },
    throughput: {
      postsPerSecond: f.throughput,
      allPublishedAfterDueS: f.lastPub ? (f.lastPub - r.dueMs) / 1000 : null,
      beforeKill: f.rateBeforeKill,
      afterRestart: f.rateAfterRestart,
    },
    kill: r.killedAt
      ? {
          atS: (r.killedAt - r.dueMs) / 1000,
          publishedAtKill: r.publishedAtKill,
          lastPublishBeforeKillS: f.lastBeforeKill ? (f.lastBeforeKill - r.dueMs) / 1000 : null,
          restartStartedS: f.w2r ? (f.w2r.startedAt - r.dueMs) / 1000 : null,
          restartReadyS: f.w2r?.readyAt ? (f.w2r.readyAt - r.dueMs) / 1000 : null,
          firstPublishAfterRestartS: f.firstAfterRestart ? (f.firstAfterRestart - r.dueMs) / 1000 : null,
          publishedBeforeKill: f.beforeKill,
          publishedAfterRestart: f.afterRestart,
          strandedByKill: f.hist.ok.length ? f.retried.size : null,
        }
      : null,
    workers: r.workers.map((w) => ({
      index: w.index,
      pid: w.pid,
      readyAfterS: w.readyAt ? (w.readyAt - w.startedAt) / 1000 : null,
      peakRssMiB: w.peakRssKiB / 1024,
      vmHwmMiB: w.hwmKiB / 1024,
      exit: w.exit,
      log: path.relative(ROOT, w.logFile),
      rssMiBEverySecond: w.samples
        .filter((_, i) => i % 4 === 0)
        .map((x) => ({ tS: Math.round((x.t - r.dueMs) / 100) / 10, mib: Math.round(x.rssKiB / 1024) })),
    })),
    lagBreakdown: { all: f.bd, slowest: f.bdSlow, historyReadErrors: f.hist.errors },
    workerProfiles: profiles
      ? profiles.map((p) => ({
          thread: p.thread,
          window: p.window,
          sampledMs: p.sampledMs,
          usPerPost: p.window.posts ? (p.sampledMs * 1000) / p.window.posts : null,
          byGroup: p.summary.byGroup.slice(0, 20),
          topSelf: p.summary.topSelf,
          file: path.relative(ROOT, p.summary.file),
        }))
      : null,
    dbActivityDuringDrain: f.act,
    cpuDuringDrain: f.cpu
      ? {
          seconds: f.drainS,
          machineBusy: f.cpu.machineBusy,
          cpuMs: f.cpu.cpuMs,
          usPerPost: f.cpuPerPost,
          otherShare: f.cpu.cpuMs.other! / (f.drainS * 1000 * CPUS),
        }
      : null,
    cpuSteadyBeforeKill: f.cpuSteady,
    cpuBulk: f.cpuBulk,
    cpuDuringCreation: r.createCpu
      ? {
          machineBusy: r.createCpu.machineBusy,
          cpuMs: r.createCpu.cpuMs,
          usPerPost: f.createCpuPerPost,
          otherShare: r.createCpu.cpuMs.other! / ((r.created.durationMs / 1000) * 1000 * CPUS),
        }
      : null,
    otherProcessesShareAtStart: b.otherAtStart,
    progressEverySecond: r.progress
      .filter((_, i) => i % 4 === 0)
      .map((p) => ({ tS: Math.round((p.t - r.dueMs) / 100) / 10, published: p.published })),
    mode: MODE,
    baselines: r.baselines,
    ratios: { drainVsTimerActivity: f.drainVsTimerActivity, drainVsBareTimer: f.drainVsBare, p99VsTimerActivity: f.p99VsBaseline },
    rss: { peakMiB: f.peakRssMiB, firstThirdMiB: f.rssFirstThirdMiB, lastThirdMiB: f.rssLastThirdMiB, flat: f.rssFlat },
    targets: f.targets,
  };
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const out = path.join(RESULTS_DIR, opt.tag ? `publishing-${opt.tag}.json` : 'publishing.json');
  fs.writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  if (f.dumpIds.length) fs.writeFileSync(out.replace(/\.json$/, '.histories.json'), JSON.stringify(f.dumped, null, 1) + '\n');
  console.log(
    `\nresults: ${path.relative(process.cwd(), out)}; worker logs: ${r.workers.map((w) => path.relative(process.cwd(), w.logFile)).join(', ')}`,
  );
  if (opt.strict && (!f.p99Met || !f.lostMet || !f.dupMet || !f.drainMet || !f.rssMet)) process.exitCode = 1;
}
