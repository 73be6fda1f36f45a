import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { Bare, Bench, Population, RescheduleResult, Slices, StorageGrowth } from '../population';
import { f0, f1, mib, s1, step, tally, writeResults } from '../harness/format';
import { machineInfo, until } from '../harness/proc';
import { lagSummary, networkPosts, type CreateResult } from '../harness/stack';
import { CLUSTER, DRAIN_DEADLINE_MS, opt, RESTART, TARGET } from './settings';

// What went out, read back (bench/README.md "population", 7.), and the report: the figures, the lines a script reads, the targets, the results file.

/** A post due within the run, not to be published before `notBeforeMs` (its due time, or its new time after a reschedule). */
export type Expected = { kind: 'A' | 'B' | 'C-moved' | 'moved-in'; notBeforeMs: number };
export type Outcome = Awaited<ReturnType<typeof readBack>>;

/** Every post due within the run against its row and the simulator's posts (one per reference). */
export async function readBack({ mon, sim }: Bench, expected: Map<string, Expected>, unscheduled: Set<string>) {
  const { rows } = await mon.query<{ id: string; published_at: Date }>(
    `select id, published_at from posts where status = 'published' and published_at is not null`,
  );
  const publishedAt = new Map(rows.map((r) => [r.id, r.published_at.getTime()]));
  const { posts: net, byRef } = await networkPosts(sim);
  const lags = { A: [] as number[], B: [] as number[] };
  const netLags = { A: [] as number[], B: [] as number[] };
  const lostByKind: Record<string, number> = {};
  let early = 0;
  for (const [id, e] of expected) {
    const [at, onNet] = [publishedAt.get(id), byRef.get(id)];
    const slice = e.kind === 'A' || e.kind === 'B' ? e.kind : null;
    if (at === undefined || !onNet) {
      tally(lostByKind, e.kind);
      // A lost post counts with the deadline as its lag, so the percentiles stay a lower bound.
      if (slice) lags[slice].push(DRAIN_DEADLINE_MS);
      continue;
    }
    if (at < e.notBeforeMs || onNet.firstMs < e.notBeforeMs) early++;
    if (slice) lags[slice].push(at - e.notBeforeMs);
    if (slice) netLags[slice].push(onNet.firstMs - e.notBeforeMs);
  }
  const seen = new Set<string>([...publishedAt.keys(), ...byRef.keys()]);
  return {
    lag: { A: lagSummary(lags.A), B: lagSummary(lags.B) },
    networkLag: { A: lagSummary(netLags.A), B: lagSummary(netLags.B) },
    lost: Object.values(lostByKind).reduce((a, n) => a + n, 0),
    lostByKind,
    duplicated: [...byRef.values()].filter((e) => e.n > 1).length,
    publishedAfterUnschedule: [...unscheduled].filter((id) => seen.has(id)).length,
    publishedEarly: early,
    stray: [...seen].filter((id) => !expected.has(id) && !unscheduled.has(id)).length,
    networkPosts: net.length,
    publishedRows: rows.length,
  };
}

/** Sleeps to `dueMs`, then polls until every one of `ids` is published or the drain deadline passes. */
export async function drain(mon: pg.Client, ids: string[], dueMs: number, label: string): Promise<void> {
  if (Date.now() < dueMs) await sleep(dueMs - Date.now());
  const published = async () =>
    (await mon.query<{ at: Date }>(`select published_at as at from posts where id = any($1) and status = 'published'`, [ids])).rows;
  let n = 0;
  await until(async () => (n = (await published()).length) >= ids.length, dueMs + DRAIN_DEADLINE_MS - Date.now(), 500);
  // The lag from each post's own publish time: a drain called after its due time (the reschedule
  // phase's, once every PATCH is answered) would otherwise report when it looked.
  const lag = lagSummary((await published()).map((r) => r.at.getTime() - dueMs));
  step(
    `${label}: ${f0(n)}/${f0(ids.length)} published, lag p50 ${f1(lag.p50S)} s / p99 ${f1(lag.p99S)} s / max ${f1(lag.maxS)} s (seen at t=${s1(Date.now() - dueMs)} s)`,
  );
}

const toMiB = (kib: number) => kib / 1024;
const calls = (c: CreateResult) => `${c.rate.toFixed(1)}/s, p50 ${c.latencyMs.p50.toFixed(0)} ms / p99 ${c.latencyMs.p99.toFixed(0)} ms`;
/** Bytes per unit (and the file's growth per unit, with `file`), then the tables that grew most: "posts 812 B, posts_pkey 96 B, …". */
const bytesPer = (g: StorageGrowth, n: number, file = true) => {
  const top = g.top.slice(0, 6).map((t) => `${t.name} ${Math.round(t.bytes / Math.max(1, n))} B`);
  return `${f0(g.bytes / Math.max(1, n))} B${file && g.fileBytes !== null ? ` (file growth ${f0(g.fileBytes / Math.max(1, n))} B)` : ''} — ${top.join(', ')}`;
};
const L = (label: string, value: string) => console.log(`  ${label.padEnd(44)} ${value}`);
const cpuText = (c: { usPerUnit: Record<string, number>; otherShare: number } | null) => {
  if (!c) return '—';
  const us = Object.entries(c.usPerUnit).filter(([, v]) => v > 0);
  const other = c.otherShare >= 0.05 ? ` (other processes took ${(c.otherShare * 100).toFixed(0)}% of the machine)` : '';
  return us.map(([k, v]) => `${k} ${f0(v)}`).join(', ') + other;
};

type Run = { bare: Bare | null; population: Population; slices: Slices; rescheduled: RescheduleResult | null; outcome: Outcome };

export async function report(b: Bench, { bare, population: pop, slices: sl, rescheduled: rs, outcome: o }: Run): Promise<void> {
  const creationRatio = bare ? pop.created.rate / bare.started.rate : null;
  const bytesRatio = bare ? pop.temporal.bytes / Math.max(1, pop.ok) / bare.bytesPerWorkflow : null;
  const restartRatio = o.lag.B.p99S / Math.max(0.001, o.lag.A.p99S);
  const rssMiB = toMiB(pop.rssKiB);

  console.log(
    `\npopulation — ${f0(pop.ok)} posts asleep over ${f0(b.seeded.length)} workspaces and ${f0(b.accounts)} accounts (${CLUSTER ? 'cluster tier' : 'dev server on SQLite'})`,
  );
  console.log('  creation (same client concurrency):');
  L('  POST /v1/posts with scheduledFor', calls(pop.created));
  L('    CPU µs per post', cpuText(pop.cpu));
  if (bare)
    L('  bare one-timer workflow starts', `${calls(bare.started)}; armed (first task run, timer set) ${bare.armedRate.toFixed(1)}/s`);
  if (bare) L('    CPU µs per workflow', cpuText(bare.cpu));
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
  const r = sl.restart;
  if (r)
    L(
      '  restart of every process',
      `stopped in ${s1(r.stopMs)} s; Temporal up ${s1(r.temporalStartMs)} s, worker polling ${s1(r.workerReadyMs)} s, API ${s1(r.apiReadyMs)} s after; ${s1(r.marginToBMs)} s to spare`,
    );
  const lagText = (k: 'A' | 'B', ms = (s: number) => (s * 1000).toFixed(0)) =>
    `${o.lag[k].count} posts, lag p50 ${ms(o.lag[k].p50S)} ms / p99 ${ms(o.lag[k].p99S)} ms / max ${ms(o.lag[k].maxS)} ms (network: p50 ${ms(o.networkLag[k].p50S)} / p99 ${ms(o.networkLag[k].p99S)} ms)`;
  L('  no restart', lagText('A'));
  L(RESTART ? '  after the restart' : '  second half (no restart)', lagText('B'));
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
  const ratio = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(2)}×`);
  console.log(
    `  targets: creation ≥ ${TARGET.creation}× ${met(targets.creation)}; Temporal bytes ≤ ${TARGET.bytes}× ${met(targets.bytes)}; worker RSS ≤ ${TARGET.rssMiB} MiB ${met(targets.rss)}; restart p99 ≤ ${TARGET.restart}× ${met(targets.restart)}; 0 lost ${met(targets.lost)}; 0 duplicated ${met(targets.duplicated)}; none early or after an unschedule ${met(targets.changes)}`,
  );
  console.log();
  console.log(`population: creation API / bare: ${ratio(creationRatio)}`);
  console.log(`population: Temporal bytes per sleeping post / bare: ${ratio(bytesRatio)}`);
  console.log(`population: worker RSS with ${pop.ok} sleeping: ${rssMiB.toFixed(0)} MiB`);
  console.log(`population: restart slice p99 / no restart: ${ratio(restartRatio)}`);
  console.log(`population: lost ${o.lost}, duplicated ${o.duplicated}`);
  if (rs)
    console.log(
      `population: reschedule ${rs.reschedules.rate.toFixed(1)}/s, unschedule ${rs.unschedules.rate.toFixed(1)}/s; published after an unschedule ${o.publishedAfterUnschedule}, before its new time ${o.publishedEarly}`,
    );

  const rates = ({ rate, latencyMs, errors }: CreateResult) => ({ rate, latencyMs, errors });
  const perItem = (g: StorageGrowth, n: number) => ({ ...g, bytes: g.bytes / n, fileBytes: g.fileBytes && g.fileBytes / n });
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
      bare: bare && { ...rates(bare.started), cpuUsPerWorkflow: bare.cpu?.usPerUnit },
      ratio: creationRatio,
    },
    storage: {
      temporalPerPost: perItem(pop.temporal, pop.ok),
      temporalPerBare: bare && perItem(bare.storage, bare.workflows),
      ratio: bytesRatio,
      servicePerPost: { bytes: pop.service.bytes / pop.ok, top: pop.service.top },
    },
    workerRssMiB: {
      rest: toMiB(b.restRssKiB),
      sleeping: rssMiB,
      creationPeak: toMiB(pop.peakRssKiB),
      afterReschedule: rs && toMiB(rs.rssKiB),
      bare: bare && toMiB(bare.rssKiB),
    },
    slices: {
      dueA: new Date(sl.tA).toISOString(),
      dueB: new Date(sl.tB).toISOString(),
      restart: r,
      lag: o.lag,
      networkLag: o.networkLag,
      p99Ratio: restartRatio,
    },
    reschedule: rs && {
      reschedules: { count: rs.reschedules.ids.length, ...rates(rs.reschedules) },
      unschedules: { count: rs.unschedules.ids.length, ...rates(rs.unschedules) },
      inRunBeforeDue: rs.inRunBeforeDue,
      temporal: rs.temporal,
      service: rs.service,
      cpuUsPerChange: rs.cpu?.usPerUnit,
    },
    outcome: o,
    targets,
  };
  const out = writeResults(opt.tag ? `population-${opt.tag}` : 'population', results);
  console.log(`\nresults: ${path.relative(process.cwd(), out)}`);
  if (opt.strict && Object.values(targets).some((t) => t === false)) process.exitCode = 1;
}
