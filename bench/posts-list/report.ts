import path from 'node:path';
import { f0, f1, mean, writeResults } from '../harness/format';
import { printAllocations, printProfile } from '../harness/profile';
import { DURATION_MS, noise, opt, otherShare, RATE_DURATION_MS, RESULT_SETTINGS, ROUNDS, TARGETS } from '../posts-list';
import type { Bench, Measured, Run } from '../posts-list';

const pad = (s: string, n: number) => s.padStart(n);

/** The posts-list bench's report: the table, the targets, the profiles and the JSON results. */
export async function report(b: Bench, r: Run) {
  const { started, machine, s, bytes } = b;
  const { closed, profiles, ablation, fixed, stages } = r;
  const agg = (ms: Measured[]) => ({
    rps: mean(ms.map((m) => m.result.rps)),
    p50: mean(ms.map((m) => m.result.latencyMs.p50)),
    p99: mean(ms.map((m) => m.result.latencyMs.p99)),
    max: Math.max(...ms.map((m) => m.result.latencyMs.max)),
    errors: ms.reduce((a, m) => a + m.result.errors, 0),
    serverCpuUsPerReq: mean(ms.map((m) => m.serverCpuUsPerReq)),
    gcUsPerReq: mean(ms.map((m) => m.gc.pauseUsPerReq)),
    pgStatementsPerReq: mean(ms.map((m) => m.pgStatementsPerReq)),
    machineBusy: ms[0]!.cpu ? mean(ms.map((m) => m.cpu!.machineBusy)) : null,
    otherProcessesShare: ms[0]!.cpu ? mean(ms.map(otherShare)) : null,
    cpuUsPerReq: ms[0]!.cpuUsPerReq
      ? Object.fromEntries(Object.keys(ms[0]!.cpuUsPerReq!).map((k) => [k, Math.round(mean(ms.map((m) => m.cpuUsPerReq![k]!)))]))
      : null,
  });
  const A = agg(closed.ours);
  const B = agg(closed.bare);
  const ratio = A.rps / B.rps;
  const ratioMet = ratio >= TARGETS.minRatio;
  const p99Met = fixed ? fixed.result.latencyMs.p99 < TARGETS.maxP99MsAtRate : null;

  console.log(`\nGET /v1/posts?projectId=…&limit=50 — 50 posts/page, ~${f0(bytes.ours / 1024)} KiB/response`);
  console.log(
    `closed loop: ${opt.connections} keep-alive connections, ${DURATION_MS / 1000} s × ${ROUNDS} round(s) per server${opt.profile ? ', PROFILED (figures carry profiler overhead)' : ''}`,
  );
  console.log(
    `  ${'server'.padEnd(22)}${pad('req/s', 9)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('max ms', 9)}${pad('errors', 8)}${pad('srv CPU µs/req', 16)}${pad('of it GC', 10)}${pad('PG stmts/req', 14)}`,
  );
  for (const [label, x] of Object.entries({ 'ours (real app)': A, 'bare Koa + pg': B })) {
    console.log(
      `  ${label.padEnd(22)}${pad(f0(x.rps), 9)}${pad(f1(x.p50), 9)}${pad(f1(x.p99), 9)}${pad(f1(x.max), 9)}${pad(String(x.errors), 8)}${pad(f0(x.serverCpuUsPerReq), 16)}${pad(f0(x.gcUsPerReq), 10)}${pad(x.pgStatementsPerReq.toFixed(2), 14)}`,
    );
  }
  console.log(`  ratio ours/bare: ${(ratio * 100).toFixed(1)}%   target ≥ ${TARGETS.minRatio * 100}%   ${ratioMet ? 'MET' : 'MISSED'}`);
  if (A.cpuUsPerReq && B.cpuUsPerReq) {
    const keys = ['ours', 'bare', 'postgres', 'redis', 'generator', 'other', 'unaccounted'];
    console.log(`  CPU per request by process (µs), machine busy ${f0((A.machineBusy ?? 0) * 100)}% / ${f0((B.machineBusy ?? 0) * 100)}%:`);
    console.log(`  ${''.padEnd(22)}${keys.map((k) => pad(k === 'unaccounted' ? 'unacct.' : k, 10)).join('')}${pad('total', 10)}`);
    for (const [label, x] of Object.entries({ 'ours run': A.cpuUsPerReq, 'bare run': B.cpuUsPerReq })) {
      console.log(
        `  ${label.padEnd(22)}${keys.map((k) => pad(f0(x[k] ?? 0), 10)).join('')}${pad(f0(Object.values(x).reduce((a, b) => a + b, 0)), 10)}`,
      );
    }
  }
  if (ablation.length) {
    // Machine CPU per request that the request path itself causes: its server, Postgres and
    // Redis (the generator and unrelated processes left out).
    const own = (m: Measured, server: string) =>
      m.cpuUsPerReq ? (m.cpuUsPerReq[server] ?? 0) + (m.cpuUsPerReq.postgres ?? 0) + (m.cpuUsPerReq.redis ?? 0) : 0;
    const base = mean(closed.bare.map((m) => own(m, 'bare')));
    console.log(`\nablation: the baseline plus one piece of ours (1 round of ${DURATION_MS / 1000} s each)`);
    console.log(
      `  ${'server'.padEnd(22)}${pad('req/s', 9)}${pad('vs bare', 9)}${pad('srv µs', 9)}${pad('pg µs', 8)}${pad('redis µs', 10)}${pad('path µs', 9)}${pad('Δ path', 8)}${pad('PG st', 7)}`,
    );
    // A row over the rounds of a server (one round for a variant): `server` is its process group.
    const row = (label: string, ms: Measured[], server: string) => {
      const at = (f: (m: Measured) => number) => mean(ms.map(f));
      const cpu = (k: string) => f0(at((m) => m.cpuUsPerReq?.[k] ?? 0));
      const [rps, path] = [at((m) => m.result.rps), at((m) => own(m, server))];
      console.log(
        `  ${label.padEnd(22)}${pad(f0(rps), 9)}${pad(`${((rps / B.rps) * 100).toFixed(0)}%`, 9)}${pad(f0(at((m) => m.serverCpuUsPerReq)), 9)}${pad(cpu('postgres'), 8)}${pad(cpu('redis'), 10)}${pad(f0(path), 9)}${pad(`${path - base >= 0 ? '+' : ''}${f0(path - base)}`, 8)}${pad(at((m) => m.pgStatementsPerReq).toFixed(2), 7)}`,
      );
    };
    row('bare', closed.bare, 'bare');
    for (const { variant, m } of ablation) row(`bare+${variant}`, [m], 'variant');
    row('ours', closed.ours, 'ours');
  }
  if (fixed) {
    const l = fixed.result.latencyMs;
    console.log(`\nopen loop against ours: ${opt.rate} req/s for ${RATE_DURATION_MS / 1000} s (latency from scheduled send time)`);
    console.log(
      `  achieved ${f1(fixed.result.rps)} req/s, ${fixed.result.ok} ok, ${fixed.result.errors} errors; p50 ${f1(l.p50)} ms, p90 ${f1(l.p90)} ms, p99 ${f1(l.p99)} ms, max ${f1(l.max)} ms`,
    );
    console.log(
      `  generator send lag p99 ${f1(fixed.result.sendLagMs.p99)} ms; server CPU ${f0(fixed.serverCpuUsPerReq)} µs/req (GC ${f0(fixed.gc.pauseUsPerReq)}); machine busy ${f0((fixed.cpu?.machineBusy ?? 0) * 100)}%${noise(fixed)}`,
    );
    console.log(`  p99 < ${TARGETS.maxP99MsAtRate} ms at ${opt.rate} req/s: ${p99Met ? 'MET' : 'MISSED'}`);
  }
  if (stages) {
    console.log('\nstages inside the app process (sequential, no load; wall includes waiting on Postgres/Redis):');
    console.log(`  ${'stage'.padEnd(56)}${pad('wall p50 µs', 13)}${pad('wall mean µs', 14)}${pad('CPU µs/call', 13)}`);
    for (const t of stages)
      console.log(`  ${t.stage.padEnd(56)}${pad(f0(t.wallP50Us), 13)}${pad(f0(t.wallMeanUs), 14)}${pad(f0(t.cpuUsPerCall), 13)}`);
  }
  for (const [name, p] of Object.entries(profiles)) {
    printProfile(`CPU profile, ${name} server`, p.summary, p.requests);
    printAllocations(
      `${opt['profile-survivors'] ? 'Survivors of young-generation collections' : 'Allocation profile'}, ${name} server`,
      p.allocations,
      p.requests,
    );
  }

  const roundJson = (m: Measured) => ({
    ...m.result,
    serverCpuUsPerReq: m.serverCpuUsPerReq,
    gc: m.gc,
    pgStatementsPerReq: m.pgStatementsPerReq,
    cpuUsPerReq: m.cpuUsPerReq,
    machineBusy: m.cpu?.machineBusy ?? null,
    otherProcessesShare: otherShare(m),
  });
  const results = {
    bench: 'posts-list',
    finishedAt: new Date().toISOString(),
    wallSeconds: Math.round((Date.now() - started) / 1000),
    machine,
    profiled: opt.profile,
    request: { method: 'GET', path: '/v1/posts?projectId=<project>&limit=50', responseBytes: bytes },
    settings: RESULT_SETTINGS,
    seed: { posts: s.posts, deletedPosts: s.deletedPosts, contentChars: s.contentChars },
    throughput: {
      ours: { ...A, rounds: closed.ours.map(roundJson) },
      bare: { ...B, rounds: closed.bare.map(roundJson) },
      ratio,
    },
    fixedRate: fixed ? roundJson(fixed) : null,
    targets: { ratio: { min: TARGETS.minRatio, met: ratioMet }, p99AtRate: { maxMs: TARGETS.maxP99MsAtRate, rate: opt.rate, met: p99Met } },
    ablation: ablation.length ? ablation.map(({ variant, m }) => ({ variant: `bare+${variant}`, ...roundJson(m) })) : null,
    stages,
    profiles: Object.keys(profiles).length ? profiles : null,
  };
  const out = writeResults(opt.profile ? 'posts-list.profile' : 'posts-list', results);
  console.log(`\nresults: ${path.relative(process.cwd(), out)}`);
  if (opt.strict && (!ratioMet || p99Met === false)) process.exitCode = 1;
}
