import fs from 'node:fs';
import path from 'node:path';

// Reads a V8 .cpuprofile (as written by the inspector or `node --cpu-prof`) and answers the
// question a bench asks of it: which part of the stack spends the process's CPU. Self time is
// grouped by package (node_modules/<pkg>), by our own source file, or by V8/Node category.
// Async work breaks call stacks (a Redis reply is parsed from a socket callback, not under
// the function that sent the command), so per-package self time is the honest attribution;
// inclusive time is given for synchronous subtrees only.

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Self time by package / source file / category, ms and share of the sampled time. */
  byGroup: Array<{ group: string; ms: number; share: number }>;
  /** Functions with the most self time. */
  topSelf: Array<{ fn: string; ms: number; share: number }>;
  /** Functions with the most inclusive (synchronous subtree) time. */
  topInclusive: Array<{ fn: string; ms: number; share: number }>;
}

function groupOf(frame: CallFrame, root: string): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return '(gc)';
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(program)') return '(program: V8/native, not attributed)';
    if (functionName === '(root)') return '(root)';
    return `(native) ${functionName || 'anonymous'}`;
  }
  if (url.startsWith('node:'))
    return url.startsWith('node:internal/') ? `node: ${url.slice('node:internal/'.length).split('/')[0]}` : `node: ${url.slice(5)}`;
  const p = url.startsWith('file://') ? decodeURIComponent(new URL(url).pathname) : url;
  const nm = p.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = p.slice(nm + '/node_modules/'.length).split('/');
    return `pkg: ${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  return `src: ${path.relative(root, p)}`;
}

function fnName(frame: CallFrame, root: string): string {
  const g = groupOf(frame, root);
  return `${frame.functionName || '(anonymous)'} [${g.replace(/^(pkg|src): /, '')}:${frame.lineNumber + 1}]`;
}

export function summarizeProfile(file: string, root: string, top = 20): ProfileSummary {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const selfByNode = new Map<number, number>();
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = (prof.timeDeltas[i + 1] ?? prof.timeDeltas[i] ?? 0) / 1000; // ms; a delta belongs to the sample before it
    const id = prof.samples[i]!;
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + dt);
    total += dt;
  }

  const groups = new Map<string, number>();
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  for (const [id, ms] of selfByNode) {
    const frame = byId.get(id)!.callFrame;
    const g = groupOf(frame, root);
    groups.set(g, (groups.get(g) ?? 0) + ms);
    const f = fnName(frame, root);
    self.set(f, (self.get(f) ?? 0) + ms);
    // Inclusive: every distinct function on the stack gets the sample once (recursion-safe).
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (cf.functionName === '(root)') break;
      const name = fnName(cf, root);
      if (seen.has(name)) continue;
      seen.add(name);
      incl.set(name, (incl.get(name) ?? 0) + ms);
    }
  }
  const rank = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  return {
    file,
    totalMs: total,
    byGroup: rank(groups, 40).map(([group, ms]) => ({ group, ms, share: ms / total })),
    topSelf: rank(self, top).map(([fn, ms]) => ({ fn, ms, share: ms / total })),
    topInclusive: rank(incl, top).map(([fn, ms]) => ({ fn, ms, share: ms / total })),
  };
}

export function printProfile(title: string, s: ProfileSummary, perRequestDivisor?: number): void {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  const per = (ms: number) => (perRequestDivisor ? `  ${((ms * 1000) / perRequestDivisor).toFixed(0).padStart(5)} µs/req` : '');
  console.log(`\n${title} — ${s.totalMs.toFixed(0)} ms of sampled CPU (idle excluded)  [${path.relative(process.cwd(), s.file)}]`);
  console.log('  self time by package / file:');
  for (const g of s.byGroup.filter((x) => x.share >= 0.005)) console.log(`    ${pct(g.share)}${per(g.ms)}  ${g.group}`);
  console.log('  top functions, self time:');
  for (const f of s.topSelf) console.log(`    ${pct(f.share)}${per(f.ms)}  ${f.fn}`);
  console.log('  top functions, inclusive (synchronous) time:');
  for (const f of s.topInclusive) console.log(`    ${pct(f.share)}${per(f.ms)}  ${f.fn}`);
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  id: number;
  children?: HeapNode[];
}

export interface AllocationSummary {
  file: string;
  /** Estimated bytes allocated in the window (V8 scales the samples up to the whole). */
  totalBytes: number;
  byGroup: Array<{ group: string; bytes: number; share: number }>;
  topSelf: Array<{ fn: string; bytes: number; share: number }>;
  topInclusive: Array<{ fn: string; bytes: number; share: number }>;
}

/** Summary of a sampling heap profile (.heapprofile): who allocates, by package and function. */
export function summarizeHeapProfile(file: string, root: string, top = 15): AllocationSummary {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: HeapNode };
  const groups = new Map<string, number>();
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  let total = 0;
  const walk = (n: HeapNode, stack: string[]) => {
    const name = fnName(n.callFrame, root);
    const isRoot = n.callFrame.functionName === '(root)';
    const here = isRoot ? stack : [...stack, name];
    if (n.selfSize > 0) {
      total += n.selfSize;
      const g = groupOf(n.callFrame, root);
      groups.set(g, (groups.get(g) ?? 0) + n.selfSize);
      self.set(name, (self.get(name) ?? 0) + n.selfSize);
      for (const f of new Set(here)) incl.set(f, (incl.get(f) ?? 0) + n.selfSize);
    }
    for (const c of n.children ?? []) walk(c, here);
  };
  walk(prof.head, []);
  const rank = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  return {
    file,
    totalBytes: total,
    byGroup: rank(groups, 30).map(([group, bytes]) => ({ group, bytes, share: bytes / total })),
    topSelf: rank(self, top).map(([fn, bytes]) => ({ fn, bytes, share: bytes / total })),
    topInclusive: rank(incl, top).map(([fn, bytes]) => ({ fn, bytes, share: bytes / total })),
  };
}

export function printAllocations(title: string, s: AllocationSummary, requests: number): void {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  const kb = (b: number) => `${(b / requests / 1024).toFixed(1).padStart(6)} KiB/req`;
  console.log(
    `\n${title} — ${(s.totalBytes / 1024 ** 2).toFixed(0)} MiB allocated, ${kb(s.totalBytes).trim()}  [${path.relative(process.cwd(), s.file)}]`,
  );
  console.log('  allocated by package / file:');
  for (const g of s.byGroup.filter((x) => x.share >= 0.01)) console.log(`    ${pct(g.share)}  ${kb(g.bytes)}  ${g.group}`);
  console.log('  top allocating functions (self):');
  for (const f of s.topSelf) console.log(`    ${pct(f.share)}  ${kb(f.bytes)}  ${f.fn}`);
}

// The worker's `--cpu-prof` profiles cover its whole life (start-up, the creation phase, the
// drain). This cuts one down to a wall-clock window so the summary speaks of the drain only.
// V8 stamps samples on a monotonic clock; the profile ends when the process exits, which
// anchors it to the wall clock.

/** Writes `out` with only the samples taken between `fromMs` and `toMs` (wall clock); returns the milliseconds they cover (idle included). */
export function cutProfile(file: string, out: string, exitedAtMs: number, fromMs: number, toMs: number): number {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const samples: number[] = [];
  const deltas: number[] = [0];
  let t = prof.startTime;
  let keptUs = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    const wall = exitedAtMs - (prof.endTime - t) / 1000;
    if (wall < fromMs || wall > toMs) continue;
    // summarizeProfile charges a sample the delta that follows it.
    const dur = prof.timeDeltas[i + 1] ?? 0;
    samples.push(prof.samples[i]!);
    deltas.push(dur);
    keptUs += dur;
  }
  fs.writeFileSync(out, JSON.stringify({ ...prof, samples, timeDeltas: deltas.slice(0, samples.length + 1) }));
  return keptUs / 1000;
}
