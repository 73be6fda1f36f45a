import path from 'node:path';
import type { Bare, Bench, Population, Slices } from '../population';
import type { RescheduleResult } from './reschedule';
import * as S from './settings';
import { perUnit } from './storage';
import type { Outcome } from './verify';
import { f0, s1, writeResults } from '../harness/format';

// The population bench's report: the figures, the five lines a script reads (issue 36 "Must
// show"), the targets, and the JSON in bench/results/.

const mib = (kib: number) => kib / 1024;
const L = (label: string, value: string) => console.log(`  ${label.padEnd(44)} ${value}`);
const cpuText = (c: { usPerUnit: Record<string, number>; otherShare: number } | null) =>
  c
    ? Object.entries(c.usPerUnit)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${f0(v)}`)
        .join(', ') + (c.otherShare >= 0.05 ? ` (other processes took ${(c.otherShare * 100).toFixed(0)}% of the machine)` : '')
    : '—';

export async function report(
  b: Bench,
  r: { bare: Bare | null; population: Population; slices: Slices; rescheduled: RescheduleResult | null; outcome: Outcome },
): Promise<void> {
  const { bare, population: pop, slices: sl, rescheduled: rs, outcome: o } = r;
  const bytesPerPost = pop.temporal.bytes / Math.max(1, pop.ok);
  const creationRatio = bare ? pop.created.rate / bare.started.rate : null;
  const bytesRatio = bare ? bytesPerPost / bare.bytesPerWorkflow : null;
  const restartRatio = o.lag.B.p99S / Math.max(0.001, o.lag.A.p99S);
  const rssMiB = mib(pop.rssKiB);

  console.log(
    `\npopulation — ${f0(pop.ok)} posts asleep over ${f0(b.seeded.length)} workspaces and ${f0(b.accounts)} accounts (${S.CLUSTER ? 'cluster tier' : 'dev server on SQLite'})`,
  );
  console.log('  creation (same client concurrency):');
  L(
    '  POST /v1/posts with scheduledFor',
    `${pop.created.rate.toFixed(1)}/s, p50 ${pop.created.latencyMs.p50.toFixed(0)} ms / p99 ${pop.created.latencyMs.p99.toFixed(0)} ms`,
  );
  L('    CPU µs per post', cpuText(pop.cpu));
  if (bare) {
    L(
      '  bare one-timer workflow starts',
      `${bare.started.rate.toFixed(1)}/s, p50 ${bare.started.latencyMs.p50.toFixed(0)} ms / p99 ${bare.started.latencyMs.p99.toFixed(0)} ms; armed (first task run, timer set) ${bare.armedRate.toFixed(1)}/s`,
    );
    L('    CPU µs per workflow', cpuText(bare.cpu));
  }
  console.log('  storage while the population sleeps:');
  L(
    '  Temporal per sleeping post',
    `${f0(bytesPerPost)} B${pop.temporal.fileBytes !== null ? ` (file growth ${f0(pop.temporal.fileBytes / Math.max(1, pop.ok))} B)` : ''} — ${perUnit(pop.temporal, pop.ok)}`,
  );
  if (bare)
    L(
      '  Temporal per bare sleeping workflow',
      `${f0(bare.bytesPerWorkflow)} B${bare.storage.fileBytes !== null ? ` (file growth ${f0(bare.storage.fileBytes / bare.workflows)} B)` : ''} — ${perUnit(bare.storage, bare.workflows)}`,
    );
  L('  service database per post', `${f0(pop.service.bytes / Math.max(1, pop.ok))} B — ${perUnit(pop.service, pop.ok)}`);
  console.log('  worker memory (RSS):');
  L('  at rest, health workflows only', `${mib(b.restRssKiB).toFixed(0)} MiB`);
  L(`  with ${f0(pop.ok)} posts asleep`, `${rssMiB.toFixed(0)} MiB (peak while they were created ${mib(pop.peakRssKiB).toFixed(0)} MiB)`);
  if (rs) L('  after the reschedules woke a tenth', `${mib(rs.rssKiB).toFixed(0)} MiB (peak ${mib(rs.peakRssKiB).toFixed(0)} MiB)`);
  if (bare) L('  bare worker with its workflows asleep', `${mib(bare.rssKiB).toFixed(0)} MiB`);
  console.log('  the due slice:');
  if (sl.restart)
    L(
      '  restart of every process',
      `stopped in ${s1(sl.restart.stopMs)} s; Temporal up ${s1(sl.restart.temporalStartMs)} s, worker polling ${s1(sl.restart.workerReadyMs)} s, API ${s1(sl.restart.apiReadyMs)} s after; ${s1(sl.restart.marginToBMs)} s to spare`,
    );
  const lagText = (k: 'A' | 'B') =>
    `${o.lag[k].count} posts, lag p50 ${(o.lag[k].p50S * 1000).toFixed(0)} ms / p99 ${(o.lag[k].p99S * 1000).toFixed(0)} ms / max ${(o.lag[k].maxS * 1000).toFixed(0)} ms (network: p50 ${(o.networkLag[k].p50S * 1000).toFixed(0)} / p99 ${(o.networkLag[k].p99S * 1000).toFixed(0)} ms)`;
  L('  no restart', lagText('A'));
  L(S.RESTART ? '  after the restart' : '  second half (no restart)', lagText('B'));
  if (rs) {
    console.log('  reschedule and unschedule (PATCH /v1/posts/{id}):');
    L(
      '  reschedules',
      `${rs.reschedules.rate.toFixed(1)}/s, p50 ${rs.reschedules.latencyMs.p50.toFixed(0)} ms / p99 ${rs.reschedules.latencyMs.p99.toFixed(0)} ms, ${rs.reschedules.errors} errors`,
    );
    L(
      '  unschedules',
      `${rs.unschedules.rate.toFixed(1)}/s, p50 ${rs.unschedules.latencyMs.p50.toFixed(0)} ms / p99 ${rs.unschedules.latencyMs.p99.toFixed(0)} ms, ${rs.unschedules.errors} errors`,
    );
    const changes = rs.reschedules.ids.length + rs.unschedules.ids.length;
    L('  Temporal per change', `${f0(rs.temporal.bytes / Math.max(1, changes))} B — ${perUnit(rs.temporal, changes)}`);
    L('    CPU µs per change', cpuText(rs.cpu));
    if (!rs.inRunBeforeDue) console.log('  NOTE: the in-run changes were answered after the C slice fell due');
  }
  L(
    'read back',
    `${f0(o.publishedRows)} posts published, ${f0(o.networkPosts)} on the network; lost ${o.lost}${o.lost ? ` (${JSON.stringify(o.lostByKind)})` : ''}, duplicated ${o.duplicated}, early ${o.publishedEarly}, after an unschedule ${o.publishedAfterUnschedule}, published without being due ${o.stray}`,
  );

  const targets = {
    creation: creationRatio === null ? null : creationRatio >= S.TARGET_CREATION_VS_BARE,
    bytes: bytesRatio === null ? null : bytesRatio <= S.TARGET_BYTES_VS_BARE,
    rss: rssMiB <= S.TARGET_WORKER_RSS_MIB,
    restart: restartRatio <= S.TARGET_RESTART_P99_VS_NO_RESTART,
    lost: o.lost === 0,
    duplicated: o.duplicated === 0,
    changes: o.publishedAfterUnschedule === 0 && o.publishedEarly === 0 && o.stray === 0,
  };
  const met = (x: boolean | null) => (x === null ? 'n/a' : x ? 'MET' : 'MISSED');
  console.log(
    `  targets: creation ≥ ${S.TARGET_CREATION_VS_BARE}× ${met(targets.creation)}; Temporal bytes ≤ ${S.TARGET_BYTES_VS_BARE}× ${met(targets.bytes)}; worker RSS ≤ ${S.TARGET_WORKER_RSS_MIB} MiB ${met(targets.rss)}; restart p99 ≤ ${S.TARGET_RESTART_P99_VS_NO_RESTART}× ${met(targets.restart)}; 0 lost ${met(targets.lost)}; 0 duplicated ${met(targets.duplicated)}; none early or after an unschedule ${met(targets.changes)}`,
  );
  console.log();
  console.log(`population: creation API / bare: ${creationRatio === null ? 'n/a' : `${creationRatio.toFixed(2)}×`}`);
  console.log(`population: Temporal bytes per sleeping post / bare: ${bytesRatio === null ? 'n/a' : `${bytesRatio.toFixed(2)}×`}`);
  console.log(`population: worker RSS with ${pop.ok} sleeping: ${rssMiB.toFixed(0)} MiB`);
  console.log(`population: restart slice p99 / no restart: ${restartRatio.toFixed(2)}×`);
  console.log(`population: lost ${o.lost}, duplicated ${o.duplicated}`);
  if (rs)
    console.log(
      `population: reschedule ${rs.reschedules.rate.toFixed(1)}/s, unschedule ${rs.unschedules.rate.toFixed(1)}/s; published after an unschedule ${o.publishedAfterUnschedule}, before its new time ${o.publishedEarly}`,
    );

  const results = {
    bench: 'population',
    finishedAt: new Date().toISOString(),
    wallSeconds: Math.round((Date.now() - b.startedAt) / 1000),
    machine: b.machine,
    otherProcessesShareAtStart: b.otherAtStart,
    settings: {
      posts: S.POSTS,
      workspaces: S.WORKSPACES,
      accounts: b.accounts,
      concurrency: S.CONCURRENCY,
      sliceShare: S.SLICE_SHARE,
      restart: S.RESTART,
      restartGapS: S.RESTART_GAP_MS / 1000,
      temporal: S.CLUSTER ? 'cluster' : 'dev server on SQLite',
    },
    health: b.health,
    creation: {
      api: { rate: pop.created.rate, latencyMs: pop.created.latencyMs, errors: pop.created.errors, cpuUsPerPost: pop.cpu?.usPerUnit },
      bare: bare
        ? { rate: bare.started.rate, latencyMs: bare.started.latencyMs, errors: bare.started.errors, cpuUsPerWorkflow: bare.cpu?.usPerUnit }
        : null,
      ratio: creationRatio,
    },
    storage: {
      temporalPerPost: {
        bytes: bytesPerPost,
        fileBytes: pop.temporal.fileBytes === null ? null : pop.temporal.fileBytes / pop.ok,
        top: pop.temporal.top,
      },
      temporalPerBare: bare
        ? {
            bytes: bare.bytesPerWorkflow,
            fileBytes: bare.storage.fileBytes === null ? null : bare.storage.fileBytes / bare.workflows,
            top: bare.storage.top,
          }
        : null,
      ratio: bytesRatio,
      servicePerPost: { bytes: pop.service.bytes / pop.ok, top: pop.service.top },
    },
    workerRssMiB: {
      rest: mib(b.restRssKiB),
      sleeping: rssMiB,
      creationPeak: mib(pop.peakRssKiB),
      afterReschedule: rs ? mib(rs.rssKiB) : null,
      bare: bare ? mib(bare.rssKiB) : null,
    },
    slices: {
      dueA: new Date(sl.tA).toISOString(),
      dueB: new Date(sl.tB).toISOString(),
      restart: sl.restart,
      lag: o.lag,
      networkLag: o.networkLag,
      p99Ratio: restartRatio,
    },
    reschedule: rs
      ? {
          reschedules: {
            count: rs.reschedules.ids.length,
            rate: rs.reschedules.rate,
            latencyMs: rs.reschedules.latencyMs,
            errors: rs.reschedules.errors,
          },
          unschedules: {
            count: rs.unschedules.ids.length,
            rate: rs.unschedules.rate,
            latencyMs: rs.unschedules.latencyMs,
            errors: rs.unschedules.errors,
          },
          inRunBeforeDue: rs.inRunBeforeDue,
          temporal: rs.temporal,
          service: rs.service,
          cpuUsPerChange: rs.cpu?.usPerUnit,
        }
      : null,
    outcome: o,
    targets,
  };
  const out = writeResults(S.TAG ? `population-${S.TAG}` : 'population', results);
  console.log(`\nresults: ${path.relative(process.cwd(), out)}`);
  if (S.opt.strict && Object.values(targets).some((t) => t === false)) process.exitCode = 1;
}
