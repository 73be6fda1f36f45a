// `npm test`. With no arguments: the whole suite as TEST_SHARDS runs side by side (default 2),
// each a complete mocha run of its own (.mocharc.yml; test/support/globalSetup.ts gives every
// run its own database, Temporal dev server, simulators and task queue, so runs never see each
// other's data). Most of a run's time is spent waiting on timers, processes and the network, so
// two runs on two cores take a little more than half the time of one. The spec files are dealt
// out by the seconds each took (test/durations.json), longest first, each to the run with the
// least so far (tooling/testShards.ts). Every output line is
// prefixed with its run's number; the exit code is non-zero when any run failed.
//
// With arguments: one mocha run, every argument passed through as written
// (`npm test -- --grep reschedule --bail test/workflows`). TEST_SHARDS=1 runs the whole suite as
// one run. TEST_UPDATE_DURATIONS=1 writes the seconds measured in this run to test/durations.json.

import { readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { launch, REPO_ROOT, type Launched } from './launcher';
import { deal, specFiles } from './testShards';

const MOCHA = createRequire(import.meta.url).resolve('mocha/bin/mocha.js');
const DURATIONS = path.join(REPO_ROOT, 'test', 'durations.json');
const REPORTER = 'test/support/durations.cjs';

async function readDurations(): Promise<Record<string, number>> {
  try {
    return JSON.parse(await readFile(DURATIONS, 'utf8'));
  } catch {
    return {};
  }
}

/** Mocha's colours survive the pipe when this process writes to a terminal. */
const colour = process.stdout.isTTY ? ['--color'] : [];

/**
 * Every run gets a terminal's Ctrl-C itself (one process group) and ends through its own
 * teardown (its database dropped, its Temporal server stopped): this process waits for that. A
 * signal sent to this process alone is passed on as the Ctrl-C mocha handles.
 */
function waitOnSignals(runs: Launched[]): void {
  const onSignal = () => {
    for (const r of runs) if (r.running()) r.child.kill('SIGINT');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

async function once(args: string[]): Promise<number> {
  const run = await launch({ command: [process.execPath, MOCHA, ...colour, ...args], name: 'mocha', onLine: (l) => console.log(l) });
  waitOnSignals([run]);
  const exit = await run.exited;
  return exit.code ?? 1;
}

async function sharded(count: number): Promise<number> {
  const shards = deal(await specFiles('test'), await readDurations(), count);
  const started = Date.now();
  const outputs = shards.map((_, i) => path.join(os.tmpdir(), `content-scheduler-test-durations-${process.pid}-${i}.json`));
  const runs: Launched[] = [];
  waitOnSignals(runs);
  const summaries = shards.map(() => [] as string[]);
  const exits = await Promise.all(
    shards.map(async (files, i) => {
      const tag = `[${i + 1}/${shards.length}]`;
      console.log(`${tag} ${files.length} files`);
      const run = await launch({
        command: [process.execPath, MOCHA, ...colour, '--reporter', REPORTER, ...files],
        name: `tests ${i + 1}/${shards.length}`,
        env: { TEST_DURATIONS_OUT: outputs[i] },
        onLine: (line) => {
          console.log(`${tag} ${line}`);
          if (/^\s+\d+ (passing|failing|pending)\b/.test(line)) summaries[i]!.push(line.trim());
        },
      });
      runs.push(run);
      return run.exited;
    }),
  );
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  console.log(`\nnpm test: ${shards.length} runs in ${minutes} min`);
  exits.forEach((e, i) => {
    const how = e.code === 0 ? 'ok' : `exit ${e.code ?? e.signal}`;
    console.log(`  run ${i + 1}: ${summaries[i]!.join(', ') || 'no summary'} (${how})`);
  });
  if (process.env.TEST_UPDATE_DURATIONS === '1') await updateDurations(outputs);
  await Promise.all(outputs.map((f) => rm(f, { force: true })));
  return exits.every((e) => e.code === 0) ? 0 : 1;
}

async function updateDurations(outputs: string[]): Promise<void> {
  const measured: Record<string, number> = {};
  for (const f of outputs) Object.assign(measured, JSON.parse(await readFile(f, 'utf8').catch(() => '{}')));
  const merged: Record<string, number> = { ...(await readDurations()), ...measured };
  // Only the spec files there are now: a deleted or renamed file's figure goes with it.
  const sorted = Object.fromEntries((await specFiles('test')).filter((f) => f in merged).map((f) => [f, merged[f]]));
  await writeFile(DURATIONS, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`test/durations.json: ${Object.keys(measured).length} files measured`);
}

const args = process.argv.slice(2);
const shards = Number(process.env.TEST_SHARDS ?? 2);
if (args.length > 0 || shards <= 1) {
  process.exit(await once(args));
} else {
  process.exit(await sharded(shards));
}
