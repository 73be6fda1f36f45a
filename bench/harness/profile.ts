import fs from 'node:fs';
import path from 'node:path';

// Summaries of V8 CPU and sampling heap profiles: self time (or bytes) by package, own source
// file or V8/Node category, since async work breaks call stacks; inclusive time covers
// synchronous subtrees only.

type CallFrame = { functionName: string; url: string; lineNumber: number };
type CpuProfile = {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
};
type HeapNode = { callFrame: CallFrame; selfSize: number; children?: HeapNode[] };

/** Amounts by package / source file / category, and the functions with the most self and inclusive (synchronous subtree) amount. */
type Row<K extends string, U extends string> = Record<K, string> & Record<U, number> & { share: number };
type Ranked<U extends string> = { byGroup: Row<'group', U>[]; topSelf: Row<'fn', U>[]; topInclusive: Row<'fn', U>[] };
export type ProfileSummary = { file: string; totalMs: number } & Ranked<'ms'>;
/** totalBytes: the bytes allocated in the window, estimated (V8 scales the samples up to the whole). */
export type AllocationSummary = { file: string; totalBytes: number } & Ranked<'bytes'>;

const SPECIAL: Record<string, string> = { '(garbage collector)': '(gc)', '(idle)': '(idle)', '(root)': '(root)' };
SPECIAL['(program)'] = '(program: V8/native, not attributed)';

function groupOf({ url, functionName }: CallFrame, root: string): string {
  // Own keys only: a native frame may be named `constructor` or `toString`.
  if (!url) return (Object.hasOwn(SPECIAL, functionName) ? SPECIAL[functionName] : undefined) ?? `(native) ${functionName || 'anonymous'}`;
  if (url.startsWith('node:'))
    return url.startsWith('node:internal/') ? `node: ${url.slice('node:internal/'.length).split('/')[0]}` : `node: ${url.slice(5)}`;
  const p = url.startsWith('file://') ? decodeURIComponent(new URL(url).pathname) : url;
  const nm = p.lastIndexOf('/node_modules/');
  const [pkg, scoped] = p.slice(nm + '/node_modules/'.length).split('/');
  return nm < 0 ? `src: ${path.relative(root, p)}` : `pkg: ${pkg!.startsWith('@') ? `${pkg}/${scoped}` : pkg}`;
}

const fnName = (frame: CallFrame, root: string) =>
  `${frame.functionName || '(anonymous)'} [${groupOf(frame, root).replace(/^(pkg|src): /, '')}:${frame.lineNumber + 1}]`;

/** Amounts (ms, bytes) by group, by function itself and by every distinct function on its stack, ranked. */
function attribution(root: string) {
  const by = { group: new Map<string, number>(), self: new Map<string, number>(), incl: new Map<string, number>() };
  const add = (m: Map<string, number>, key: string, v: number) => m.set(key, (m.get(key) ?? 0) + v);
  let total = 0;
  return {
    add(frame: CallFrame, stack: readonly string[], amount: number) {
      total += amount;
      add(by.group, groupOf(frame, root), amount);
      add(by.self, fnName(frame, root), amount);
      for (const f of new Set(stack)) add(by.incl, f, amount);
    },
    ranked<U extends string>(unit: U, groups: number, top: number): { total: number } & Ranked<U> {
      const rank = <K extends string>(m: Map<string, number>, n: number, key: K) =>
        [...m]
          .sort((a, b) => b[1] - a[1])
          .slice(0, n)
          .map(([name, v]) => ({ [key]: name, [unit]: v, share: v / total }) as Row<K, U>);
      return { total, byGroup: rank(by.group, groups, 'group'), topSelf: rank(by.self, top, 'fn'), topInclusive: rank(by.incl, top, 'fn') };
    },
  };
}

export function summarizeProfile(file: string, root: string, top = 20): ProfileSummary {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map(prof.nodes.flatMap((n) => (n.children ?? []).map((c) => [c, n.id] as const)));
  const selfByNode = new Map<number, number>();
  for (const [i, id] of prof.samples.entries()) {
    const dt = (prof.timeDeltas[i + 1] ?? prof.timeDeltas[i] ?? 0) / 1000; // ms; a delta belongs to the sample before it
    if (byId.get(id)!.callFrame.functionName !== '(idle)') selfByNode.set(id, (selfByNode.get(id) ?? 0) + dt);
  }
  const a = attribution(root);
  for (const [id, ms] of selfByNode) {
    const stack: string[] = [];
    for (let cur = id; byId.get(cur)!.callFrame.functionName !== '(root)'; cur = parent.get(cur)!)
      stack.push(fnName(byId.get(cur)!.callFrame, root));
    a.add(byId.get(id)!.callFrame, stack, ms);
  }
  const { total, ...ranked } = a.ranked('ms', 40, top);
  return { file, totalMs: total, ...ranked };
}

const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;

export function printProfile(title: string, s: ProfileSummary, perRequestDivisor?: number): void {
  const per = (ms: number) => (perRequestDivisor ? `  ${((ms * 1000) / perRequestDivisor).toFixed(0).padStart(5)} µs/req` : '');
  console.log(`\n${title} — ${s.totalMs.toFixed(0)} ms of sampled CPU (idle excluded)  [${path.relative(process.cwd(), s.file)}]`);
  console.log('  self time by package / file:');
  for (const g of s.byGroup.filter((x) => x.share >= 0.005)) console.log(`    ${pct(g.share)}${per(g.ms)}  ${g.group}`);
  console.log('  top functions, self time:');
  for (const f of s.topSelf) console.log(`    ${pct(f.share)}${per(f.ms)}  ${f.fn}`);
  console.log('  top functions, inclusive (synchronous) time:');
  for (const f of s.topInclusive) console.log(`    ${pct(f.share)}${per(f.ms)}  ${f.fn}`);
}

/** Summary of a sampling heap profile (.heapprofile): who allocates, by package and function. */
export function summarizeHeapProfile(file: string, root: string, top = 15): AllocationSummary {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: HeapNode };
  const a = attribution(root);
  const walk = (n: HeapNode, stack: string[]) => {
    const here = n.callFrame.functionName === '(root)' ? stack : [...stack, fnName(n.callFrame, root)];
    if (n.selfSize > 0) a.add(n.callFrame, here, n.selfSize);
    for (const c of n.children ?? []) walk(c, here);
  };
  walk(prof.head, []);
  const { total, ...ranked } = a.ranked('bytes', 30, top);
  return { file, totalBytes: total, ...ranked };
}

export function printAllocations(title: string, s: AllocationSummary, requests: number): void {
  const kb = (b: number) => `${(b / requests / 1024).toFixed(1).padStart(6)} KiB/req`;
  console.log(
    `\n${title} — ${(s.totalBytes / 1024 ** 2).toFixed(0)} MiB allocated, ${kb(s.totalBytes).trim()}  [${path.relative(process.cwd(), s.file)}]`,
  );
  console.log('  allocated by package / file:');
  for (const g of s.byGroup.filter((x) => x.share >= 0.01)) console.log(`    ${pct(g.share)}  ${kb(g.bytes)}  ${g.group}`);
  console.log('  top allocating functions (self):');
  for (const f of s.topSelf) console.log(`    ${pct(f.share)}  ${kb(f.bytes)}  ${f.fn}`);
}

/**
 * A `--cpu-prof` profile (the process's whole life, ending at its exit) cut to a wall-clock window:
 * writes `out` with only the samples taken between `fromMs` and `toMs`; returns the milliseconds
 * they cover (idle included).
 */
export function cutProfile(file: string, out: string, exitedAtMs: number, fromMs: number, toMs: number): number {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const samples: number[] = [];
  const deltas: number[] = [0];
  let t = prof.startTime;
  for (const [i, id] of prof.samples.entries()) {
    t += prof.timeDeltas[i] ?? 0;
    const wall = exitedAtMs - (prof.endTime - t) / 1000;
    if (wall < fromMs || wall > toMs) continue;
    // summarizeProfile charges a sample the delta that follows it.
    samples.push(id);
    deltas.push(prof.timeDeltas[i + 1] ?? 0);
  }
  fs.writeFileSync(out, JSON.stringify({ ...prof, samples, timeDeltas: deltas.slice(0, samples.length + 1) }));
  return deltas.reduce((a, b) => a + b, 0) / 1000;
}
