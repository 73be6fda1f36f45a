// The replay gate (docs/operations.md "Deploying workflow changes"): replays workflow histories
// against the current workflow bundle, the one the worker would load, and fails naming the run
// whose history the new code cannot reproduce.
//
//   npm run replay                                   # the committed corpus, test/replay/histories
//   npm run replay -- --from-server [--since 7d] [--per-type 50] [--address host:port] [--namespace ns]
//   npm run replay -- --from-server --uses-patch <patch id> [--type publishPostWorkflow]
//
// From a server it takes, for every workflow type the bundle exports and every other type the
// server has runs of, the open runs first (a publish workflow may have slept for weeks, and the
// new workers replay exactly those) and then runs closed within --since.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import { defaultPayloadConverter, type HistoryAndWorkflowId } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { config } from '../lib/config';
import { temporalAddress } from '../lib/temporal/client';
import * as workflows from '../workflows';
import { workerBundle } from '../workers/worker';

type History = temporal.api.history.v1.IHistory;

/** The committed corpus the replay suite (test/replay) and `npm run replay` without flags replay. */
export const CORPUS_DIR = path.resolve(import.meta.dirname, '..', 'test', 'replay', 'histories');

/** Every workflow type the worker registers: the functions workflows/index.ts exports. */
export const BUNDLED_WORKFLOW_TYPES: readonly string[] = Object.entries(workflows)
  .filter(([, value]) => typeof value === 'function')
  .map(([name]) => name)
  .sort();

export interface ReplayFailure {
  workflowId: string;
  runId: string;
  type: string;
  error: string;
}

export interface ReplayReport {
  /** Runs replayed per workflow type. */
  replayed: Map<string, number>;
  failures: ReplayFailure[];
}

/** A run to replay; the history is fetched only when the replayer reaches it. */
export interface RunToReplay {
  workflowId: string;
  type: string;
  history: () => Promise<History>;
}

function typeOf(history: History): string {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
}

/**
 * Replays the runs one by one (Worker.runReplayHistories) against `bundle`. A run the code cannot
 * reproduce is a failure carrying the SDK's nondeterminism message, never an exception, so one
 * report names every such run.
 */
export async function replayRuns(
  bundle: WorkflowBundleOption,
  runs: Iterable<RunToReplay> | AsyncIterable<RunToReplay>,
): Promise<ReplayReport> {
  const report: ReplayReport = { replayed: new Map(), failures: [] };
  // The replayer works through one history at a time, in order, so each result belongs to the
  // oldest history handed over and not yet answered.
  const pending: Array<{ type: string }> = [];
  async function* histories(): AsyncGenerator<HistoryAndWorkflowId> {
    for await (const run of runs) {
      pending.push({ type: run.type });
      yield { workflowId: run.workflowId, history: await run.history() };
    }
  }
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories())) {
    const { type } = pending.shift()!;
    report.replayed.set(type, (report.replayed.get(type) ?? 0) + 1);
    if (result.error) report.failures.push({ workflowId: result.workflowId, runId: result.runId, type, error: result.error.message });
  }
  return report;
}

/** The committed corpus as runs to replay (file name = workflow id, as in test/replay). */
export function corpusRuns(dir = CORPUS_DIR): RunToReplay[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as History;
      return { workflowId: path.basename(file, '.json'), type: typeOf(history), history: async () => history };
    });
}

export interface ServerSelection {
  client: Client;
  /** Closed runs are taken when they closed within this many milliseconds; open runs whatever their age. */
  sinceMs: number;
  /** At most this many runs per workflow type; null: every run that matches. */
  perType: number | null;
  /** Only these workflow types (default: every bundled type, and every other type the server has runs of). */
  types?: readonly string[];
  /** Only runs on this task queue (a namespace shared by several deployments, or one test's queue). */
  taskQueue?: string;
  /** Open runs only (what a patch removal must wait for). */
  openOnly?: boolean;
  now?: Date;
}

const quoted = (value: string) => `'${value.replace(/'/g, "\\'")}'`;

async function take(client: Client, query: string, limit: number | null): Promise<WorkflowExecutionInfo[]> {
  const runs: WorkflowExecutionInfo[] = [];
  if (limit === 0) return runs;
  for await (const run of client.workflow.list({ query, pageSize: Math.min(limit ?? 1000, 1000) })) {
    runs.push(run);
    if (limit !== null && runs.length >= limit) break;
  }
  return runs;
}

/**
 * The runs to replay from the server's visibility store: per type, open runs first, then runs
 * closed within `sinceMs`, up to `perType`. Types the bundle does not export are found with one
 * more query, so a run of a workflow that was deleted from the code still fails the gate.
 */
export async function serverRuns(sel: ServerSelection): Promise<RunToReplay[]> {
  const since = new Date((sel.now ?? new Date()).getTime() - sel.sinceMs).toISOString();
  const scope = sel.taskQueue ? ` AND TaskQueue = ${quoted(sel.taskQueue)}` : '';
  const closed = `ExecutionStatus != 'Running' AND CloseTime >= ${quoted(since)}`;
  const types = [...(sel.types ?? BUNDLED_WORKFLOW_TYPES)];
  if (!sel.types) {
    const others = BUNDLED_WORKFLOW_TYPES.map((t) => `WorkflowType != ${quoted(t)}`).join(' AND ');
    const found = [
      ...(await take(sel.client, `ExecutionStatus = 'Running' AND ${others}${scope}`, null)),
      ...(sel.openOnly ? [] : await take(sel.client, `${closed} AND ${others}${scope}`, null)),
    ];
    for (const run of found) if (!types.includes(run.type)) types.push(run.type);
  }
  const runs: WorkflowExecutionInfo[] = [];
  for (const type of types) {
    const ofType = `WorkflowType = ${quoted(type)}${scope}`;
    const open = await take(sel.client, `${ofType} AND ExecutionStatus = 'Running'`, sel.perType);
    const left = sel.perType === null ? null : sel.perType - open.length;
    runs.push(...open, ...(sel.openOnly ? [] : await take(sel.client, `${ofType} AND ${closed}`, left)));
  }
  return runs.map((run) => ({
    workflowId: run.workflowId,
    type: run.type,
    history: async () => (await sel.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()) as History,
  }));
}

/** The patches a history recorded: the SDK's `core_patch` markers, one per patched() or deprecatePatch() call on the new path. */
export function patchesIn(history: History): Array<{ id: string; deprecated: boolean }> {
  const found: Array<{ id: string; deprecated: boolean }> = [];
  for (const event of history.events ?? []) {
    const marker = event.markerRecordedEventAttributes;
    const payload = marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0] : undefined;
    if (payload) found.push(defaultPayloadConverter.fromPayload<{ id: string; deprecated: boolean }>(payload as never));
  }
  return found;
}

export interface PatchUsage {
  type: string;
  /** Open runs that recorded the patch through patched(): they replay only while the code still calls patched() or deprecatePatch() with this id. */
  withPatch: string[];
  /** Open runs that recorded it through deprecatePatch(): code without the call skips such a marker. */
  withDeprecatedPatch: string[];
  /** Open runs without it: started before the patch shipped (or not yet at the call), they take the old branch. */
  withoutPatch: string[];
}

/** Per workflow type, which open runs recorded the patch and how (docs/operations.md, "Removing a patch"). */
export async function patchUsage(sel: ServerSelection, patchId: string): Promise<PatchUsage[]> {
  const byType = new Map<string, PatchUsage>();
  for (const run of await serverRuns({ ...sel, openOnly: true })) {
    const usage = byType.get(run.type) ?? { type: run.type, withPatch: [], withDeprecatedPatch: [], withoutPatch: [] };
    byType.set(run.type, usage);
    const marker = patchesIn(await run.history()).find((p) => p.id === patchId);
    (marker ? (marker.deprecated ? usage.withDeprecatedPatch : usage.withPatch) : usage.withoutPatch).push(run.workflowId);
  }
  return [...byType.values()];
}

/** A count, or Infinity for "all" (commander stores a parser's null as an empty string). */
function parseCount(value: string): number {
  if (value === 'all') return Number.POSITIVE_INFINITY;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a positive whole number, or "all"');
  return n;
}

function parseDuration(value: string): number {
  try {
    const ms = msToNumber(value as never);
    if (Number.isFinite(ms) && ms > 0) return ms;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError('a duration such as 7d, 36h or 90m');
}

function printReport(report: ReplayReport, out: (line: string) => void): void {
  for (const [type, count] of [...report.replayed].sort(([a], [b]) => a.localeCompare(b))) {
    const failed = report.failures.filter((f) => f.type === type).length;
    out(`${failed ? 'FAIL' : 'ok  '} ${type}: ${count} replayed${failed ? `, ${failed} nondeterministic` : ''}`);
  }
  for (const f of report.failures) out(`nondeterminism in ${f.type} ${f.workflowId} (run ${f.runId}): ${f.error}`);
}

export interface CliResult {
  code: number;
  lines: string[];
}

/** The command line, callable in-process: the lines it printed and the exit code it chose. */
export async function runCli(argv: string[], print: (line: string) => void = console.log): Promise<CliResult> {
  const lines: string[] = [];
  const out = (line: string) => {
    lines.push(line);
    print(line);
  };
  const program = new Command('replay')
    .description('Replay workflow histories against the current workflow bundle; non-zero exit on nondeterminism')
    .option('--from-server', 'replay recent runs from a Temporal server instead of the committed corpus')
    .addOption(
      new Option('--since <duration>', 'closed runs: those closed within this window')
        .default(7 * 86_400_000, '7d')
        .argParser(parseDuration),
    )
    .addOption(new Option('--per-type <n>', 'runs per workflow type, or "all"').default(50).argParser(parseCount))
    .option('--address <host:port>', 'Temporal frontend (default: TEMPORAL_ADDRESS, else 127.0.0.1:7233)')
    .option('--namespace <ns>', 'Temporal namespace (default: TEMPORAL_NAMESPACE, else default)')
    .option('--task-queue <name>', 'only runs on this task queue')
    .option('--type <workflowType...>', 'only these workflow types')
    .option('--bundle <file>', 'a built workflow bundle (dist/workflow-bundle.js) instead of the one the worker would load')
    .option('--uses-patch <patchId>', 'list open runs with and without this patch marker instead of replaying')
    .option('--allow-empty', 'exit 0 when the server has no runs to replay')
    .exitOverride()
    .configureOutput({ writeErr: (s) => lines.push(s.trimEnd()) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    const message = (err as Error).message;
    // --help and --version end here too, with code 0.
    const code = (err as { exitCode?: number }).exitCode ?? 2;
    if (code) console.error(message);
    return { code: code ? 2 : 0, lines };
  }
  const opts = program.opts<{
    fromServer?: boolean;
    since: number;
    perType: number;
    address?: string;
    namespace?: string;
    taskQueue?: string;
    type?: string[];
    bundle?: string;
    usesPatch?: string;
    allowEmpty?: boolean;
  }>();

  if (!opts.fromServer && (opts.usesPatch || opts.address || opts.namespace || opts.taskQueue)) {
    console.error('--uses-patch, --address, --namespace and --task-queue read a server: add --from-server');
    return { code: 2, lines };
  }
  if (!opts.fromServer) {
    const report = await replayRuns(await bundleFor(opts.bundle), corpusRuns());
    printReport(report, out);
    return { code: report.failures.length ? 1 : 0, lines };
  }

  const address = opts.address ?? temporalAddress();
  const namespace = opts.namespace ?? config.temporalNamespace;
  const connection = await Connection.connect({ address });
  try {
    const sel: ServerSelection = {
      client: new Client({ connection, namespace }),
      sinceMs: opts.since,
      perType: Number.isFinite(opts.perType) ? opts.perType : null,
      types: opts.type,
      taskQueue: opts.taskQueue,
    };
    if (opts.usesPatch) {
      const usage = await patchUsage({ ...sel, perType: null }, opts.usesPatch);
      for (const u of usage) {
        out(
          `${u.type}: ${u.withPatch.length} open runs recorded ${opts.usesPatch}, ${u.withDeprecatedPatch.length} recorded it deprecated, ${u.withoutPatch.length} did not`,
        );
        for (const id of u.withoutPatch.slice(0, 20)) out(`  without: ${id}`);
      }
      const total = usage.reduce((n, u) => n + u.withPatch.length + u.withDeprecatedPatch.length + u.withoutPatch.length, 0);
      out(`${total} open runs on ${address} (${namespace})`);
      return { code: 0, lines };
    }
    const runs = await serverRuns(sel);
    if (!runs.length) {
      out(`no workflow runs on ${address} (${namespace}) to replay: wrong --address or --namespace?`);
      return { code: opts.allowEmpty ? 0 : 1, lines };
    }
    const report = await replayRuns(await bundleFor(opts.bundle), runs);
    printReport(report, out);
    out(
      `${runs.length} runs from ${address} (${namespace}): ${report.failures.length ? `${report.failures.length} nondeterministic` : 'all replayed'}`,
    );
    return { code: report.failures.length ? 1 : 0, lines };
  } finally {
    await connection.close();
  }
}

/** The bundle to replay against: a named file, else exactly what the worker would load (workers/worker.ts). */
async function bundleFor(file: string | undefined): Promise<WorkflowBundleOption> {
  return file ? { codePath: path.resolve(file) } : workerBundle();
}

if (process.argv[1] && import.meta.filename === path.resolve(process.argv[1])) {
  // The replay worker's state changes are INFO lines; the report is what the reader wants.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  runCli(process.argv.slice(2))
    .then(({ code }) => process.exit(code))
    .catch((err) => {
      console.error(`replay: ${(err as Error).message}`);
      process.exit(2);
    });
}
