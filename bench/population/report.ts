import path from 'node:path';
import type { Bare, Bench, Population, Slices } from '../population';
import { f0, mib, s1, writeResults } from '../harness/format';
import { machineInfo } from '../harness/proc';
import type { CreateResult } from '../harness/stack';
import type { Outcome, RescheduleResult } from './outcome';
import * as S from './settings';
import { perUnit, type StorageGrowth } from './storage';

// The population bench's report: the figures, the lines a script reads, the targets, the results file.

const { opt, TARGET } = S;
const toMiB = (kib: number) => kib / 1024;
/** Calls a second and their latency. */
const calls = (c: CreateResult) => `${c.rate.toFixed(1)}/s, p50 ${c.latencyMs.p50.toFixed(0)} ms / p99 ${c.latencyMs.p99.toFixed(0)} ms`;
/** Bytes per unit (and the file's growth per unit, with `file`), then the tables that grew. */
const bytesPer = (g: StorageGrowth, n: number, file = true) =>
  `${f0(g.bytes / Math.max(1, n))} B${file && g.fileBytes !== null ? ` (file growth ${f0(g.fileBytes / Math.max(1, n))} B)` : ''} — ${perUnit(g, n)}`;
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
  const rssMiB = toMiB(pop.rssKiB);

  console.log(
    `\npopulation — ${f0(pop.ok)} posts asleep over ${f0(b.seeded.length)} workspaces and ${f0(b.accounts)} accounts (${S.CLUSTER ? 'cluster tier' : 'dev server on SQLite'})`,
  );
  console.log('  creation (same client concurrency):');
  L('  POST /v1/posts with scheduledFor', calls(pop.created));
  L('    CPU µs per post', cpuText(pop.cpu));
  if (bare) {
    L('  bare one-timer workflow starts', `${calls(bare.started)}; armed (first task run, timer set) ${bare.armedRate.toFixed(1)}/s`);
    L('    CPU µs per workflow', cpuText(bare.cpu));
  }
  console.log('  storage while the population sleeps:');
  L('  Temporal per sleeping post', bytesPer(pop.temporal, pop.ok));
  if (bare) L('  Temporal per bare sleeping workflow', bytesPer(bare.storage, bare.workflows));
  L('  service database per post', bytesPer(pop.service, pop.ok));
  console.log('  worker memory (RSS):');
  L('  at rest, health workflows only', mib(b.restRssKiB));
  L(`  with ${f0(pop.ok)} posts asleep`, `${mib(pop.rssKiB)} (peak while they were created ${mib(pop.peakRssKiB)})`);
  if (rs) L('  after the reschedules woke a tenth', `${mib(rs.rssKiB)} (peak ${mib(rs.peakRssKiB)})`);
  if (bare) L('  bare worker with its workflows asleep', mib(bare.rssKiB));
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
    L('  reschedules', `${calls(rs.reschedules)}, ${rs.reschedules.errors} errors`);
    L('  unschedules', `${calls(rs.unschedules)}, ${rs.unschedules.errors} errors`);
    L('  Temporal per change', bytesPer(rs.temporal, rs.reschedules.ids.length + rs.unschedules.ids.length, false));
    L('    CPU µs per change', cpuText(rs.cpu));
    if (!rs.inRunBeforeDue) console.log('  NOTE: the in-run changes were answered after the C slice fell due');
  }
  L(
    'read back',
    `${f0(o.publishedRows)} posts published, ${f0(o.networkPosts)} on the network; lost ${o.lost}${o.lost ? ` (${JSON.stringify(o.lostByKind)})` : ''}, duplicated ${o.duplicated}, early ${o.publishedEarly}, after an unschedule ${o.publishedAfterUnschedule}, published without being due ${o.stray}`,
  );

  const targets = {
    creation: creationRatio === null ? null : creationRatio >= TARGET.creation,
    bytes: bytesRatio === null ? null : bytesRatio <= TARGET.bytes,
    rss: rssMiB <= TARGET.rssMiB,
    restart: restartRatio <= TARGET.restart,
    lost: o.lost === 0,
    duplicated: o.duplicated === 0,
    changes: o.publishedAfterUnschedule === 0 && o.publishedEarly === 0 && o.stray === 0,
  };
  const met = (x: boolean | null) => (x === null ? 'n/a' : x ? 'MET' : 'MISSED');
  console.log(
    `  targets: creation ≥ ${TARGET.creation}× ${met(targets.creation)}; Temporal bytes ≤ ${TARGET.bytes}× ${met(targets.bytes)}; worker RSS ≤ ${TARGET.rssMiB} MiB ${met(targets.rss)}; restart p99 ≤ ${TARGET.restart}× ${met(targets.restart)}; 0 lost ${met(targets.lost)}; 0 duplicated ${met(targets.duplicated)}; none early or after an unschedule ${met(targets.changes)}`,
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

  const rates = (c: CreateResult) => ({ rate: c.rate, latencyMs: c.latencyMs, errors: c.errors });
  const perItem = (g: StorageGrowth, n: number) => ({
    bytes: g.bytes / n,
    fileBytes: g.fileBytes === null ? null : g.fileBytes / n,
    top: g.top,
  });
  const results = {
    bench: 'population',
    finishedAt: new Date().toISOString(),
    wallSeconds: Math.round((Date.now() - b.startedAt) / 1000),
    machine: machineInfo(),
    otherProcessesShareAtStart: b.otherAtStart,
    settings: { ...opt, accounts: b.accounts },
    health: b.health,
    creation: {
      api: { ...rates(pop.created), cpuUsPerPost: pop.cpu?.usPerUnit },
      bare: bare ? { ...rates(bare.started), cpuUsPerWorkflow: bare.cpu?.usPerUnit } : null,
      ratio: creationRatio,
    },
    storage: {
      temporalPerPost: perItem(pop.temporal, pop.ok),
      temporalPerBare: bare ? perItem(bare.storage, bare.workflows) : null,
      ratio: bytesRatio,
      servicePerPost: { bytes: pop.service.bytes / pop.ok, top: pop.service.top },
    },
    workerRssMiB: {
      rest: toMiB(b.restRssKiB),
      sleeping: rssMiB,
      creationPeak: toMiB(pop.peakRssKiB),
      afterReschedule: rs ? toMiB(rs.rssKiB) : null,
      bare: bare ? toMiB(bare.rssKiB) : null,
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
          reschedules: { count: rs.reschedules.ids.length, ...rates(rs.reschedules) },
          unschedules: { count: rs.unschedules.ids.length, ...rates(rs.unschedules) },
          inRunBeforeDue: rs.inRunBeforeDue,
          temporal: rs.temporal,
          service: rs.service,
          cpuUsPerChange: rs.cpu?.usPerUnit,
        }
      : null,
    outcome: o,
    targets,
  };
  const out = writeResults(opt.tag ? `population-${opt.tag}` : 'population', results);
  console.log(`\nresults: ${path.relative(process.cwd(), out)}`);
  if (opt.strict && Object.values(targets).some((t) => t === false)) process.exitCode = 1;
}
