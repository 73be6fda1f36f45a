import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { opt, DURATION_MS, WARMUP_MS, RUN_KINDS, MCP_KINDS, TARGET_RATIO, PROFILE_DIR, type Kind, type McpKind } from './settings';
import type { Round } from './clients';
import { loadAverage, REPO_ROOT, writeResults } from '../harness/format';
import { machineInfo } from '../harness/proc';

// The MCP bench's report: each tool's doors side by side, the paired ratios to REST, the targets and the JSON results.

function meanOf(rounds: Round[], tool: string, kind: Kind) {
  const rs = rounds.filter((r) => r.tool === tool && r.kind === kind);
  if (rs.length === 0) return null;
  const avg = (f: (r: Round) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
  return {
    tool,
    kind,
    callsPerSecond: avg((r) => r.callsPerSecond),
    p50Ms: avg((r) => r.latencyMs.p50),
    p99Ms: avg((r) => r.latencyMs.p99),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    serverCpuUsPerCall: rs.every((r) => r.serverCpuUsPerCall !== null) ? avg((r) => r.serverCpuUsPerCall!) : null,
    clientCpuUsPerCall: avg((r) => r.clientCpuUsPerCall),
  };
}

/**
 * The door's calls/s over its twin's: the median of the ratios of the rounds run side by side
 * (the k-th round of each kind are adjacent in time), so that a burst of load from elsewhere on
 * the machine, which lands on one round, moves one ratio rather than the figure.
 */
function pairedRatio(rounds: Round[], tool: string, kind: McpKind): number | null {
  const rest = rounds.filter((r) => r.tool === tool && r.kind === 'rest');
  const mcp = rounds.filter((r) => r.tool === tool && r.kind === kind);
  if (rest.length === 0 || rest.length !== mcp.length) return null;
  const ratios = mcp.map((m, k) => m.callsPerSecond / rest[k]!.callsPerSecond).sort((a, b) => a - b);
  const mid = ratios.length >> 1;
  return ratios.length % 2 ? ratios[mid]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
}

const label = (tool: string, kind: McpKind) => (kind === 'plain' ? `MCP ${tool}` : `MCP ${tool} (SDK ${kind})`);
const cpu = (us: number | null) => (us === null ? '?' : us.toFixed(0));

/** A tool's mean figures through REST and each MCP kind, with each kind's paired ratio to REST. */
function toolRow(rounds: Round[], tool: string) {
  const mcp = MCP_KINDS.map((kind) => ({ ...meanOf(rounds, tool, kind)!, ratio: pairedRatio(rounds, tool, kind) }));
  return { tool, rest: meanOf(rounds, tool, 'rest'), mcp: Object.fromEntries(mcp.map((m) => [m.kind, m])) };
}

export function printTool(tool: string, rounds: Round[], bytes: Partial<Record<Kind, number>>) {
  const { rest, mcp } = toolRow(rounds, tool);
  for (const m of Object.values(mcp)) {
    const kind = m.kind as McpKind;
    const errors = m.errors + (rest?.errors ?? 0);
    const size = kind in bytes && 'rest' in bytes ? `; answer ${bytes[kind]} vs ${bytes.rest} bytes` : '';
    console.log(
      rest && m.ratio !== null
        ? `  ${label(tool, kind)} / REST twin: ${m.ratio.toFixed(2)}×  (${m.callsPerSecond.toFixed(0)} vs ${rest.callsPerSecond.toFixed(0)} calls/s; server CPU ${cpu(m.serverCpuUsPerCall)} vs ${cpu(rest.serverCpuUsPerCall)} µs/call${size}${errors ? `; errors ${errors}` : ''})`
        : `  ${label(tool, kind)}: ${m.callsPerSecond.toFixed(0)} calls/s, server CPU ${cpu(m.serverCpuUsPerCall)} µs/call`,
    );
  }
  if (MCP_KINDS.length === 0 && rest)
    console.log(`  REST twin of ${tool}: ${rest.callsPerSecond.toFixed(0)} calls/s, server CPU ${cpu(rest.serverCpuUsPerCall)} µs/call`);
}

export async function report(rounds: Round[]) {
  const tools = [...new Set(rounds.map((r) => r.tool))];
  const rows = tools.map((tool) => toolRow(rounds, tool));
  const w = Math.max(...tools.map((t) => t.length), 4);
  console.log(
    `\n  ${'tool'.padEnd(w)}   REST calls/s  µs/call  ${MCP_KINDS.map((k) => `${k.padStart(10)} calls/s  µs/call    ratio  CPU ratio`).join('  ')}`,
  );
  for (const r of rows) {
    console.log(
      `  ${r.tool.padEnd(w)} ${(r.rest?.callsPerSecond.toFixed(0) ?? '-').padStart(14)} ${(r.rest ? cpu(r.rest.serverCpuUsPerCall) : '-').padStart(8)}  ${MCP_KINDS.map(
        (k) => {
          const m = r.mcp[k]!;
          // REST's server CPU per call over the door's: the steadier figure on a loaded machine.
          const cpuRatio =
            r.rest?.serverCpuUsPerCall && m.serverCpuUsPerCall ? `${(r.rest.serverCpuUsPerCall / m.serverCpuUsPerCall).toFixed(2)}×` : '-';
          return `${m.callsPerSecond.toFixed(0).padStart(18)} ${cpu(m.serverCpuUsPerCall).padStart(8)} ${(m.ratio === null ? '-' : `${m.ratio.toFixed(2)}×`).padStart(8)} ${cpuRatio.padStart(10)}`;
        },
      ).join('  ')}`,
    );
  }
  const plainRatios = rows.flatMap((r) => (r.mcp.plain?.ratio != null ? [{ tool: r.tool, ratio: r.mcp.plain.ratio }] : []));
  const target = plainRatios.length
    ? {
        min: TARGET_RATIO,
        lowest: plainRatios.reduce((a, b) => (b.ratio < a.ratio ? b : a)),
        missed: plainRatios.filter((r) => r.ratio < TARGET_RATIO).map((r) => r.tool),
      }
    : null;
  if (target) {
    console.log(
      `\n  every read tool ≥ ${TARGET_RATIO}× its REST twin (plain client): ${target.missed.length === 0 ? 'met' : `MISSED by ${target.missed.join(', ')}`}; lowest ${target.lowest.tool} ${target.lowest.ratio.toFixed(2)}×`,
    );
    console.log(`  (load average ${loadAverage(1)}: the machine is shared, read the ratios, not the rates)`);
    if (opt.strict && target.missed.length) process.exitCode = 1;
  }
  writeResults('mcp', {
    bench: 'mcp',
    target,
    at: new Date().toISOString(),
    machine: { ...machineInfo(), loadavg: os.loadavg() },
    options: { sessions: opt.sessions, durationS: DURATION_MS / 1000, warmupS: WARMUP_MS / 1000, kinds: RUN_KINDS, chunks: opt.chunks },
    tools: rows,
    rounds,
  });
  console.log('\n  written to bench/results/mcp.json');
  if (opt.profile) {
    const { printProfile, summarizeProfile } = await import('../harness/profile');
    for (const f of fs.readdirSync(PROFILE_DIR).filter((x) => x.endsWith('.cpuprofile')))
      printProfile('server', summarizeProfile(path.join(PROFILE_DIR, f), REPO_ROOT, 25));
  }
}
