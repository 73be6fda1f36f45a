import os from 'node:os';
import path from 'node:path';
import { BURST_TARGET, PACED_P99_TARGET_MS, opt, byNumber, percentile, run } from '../webhooks';
import type { Bench, Baseline } from '../webhooks';
import { writeResults } from '../harness/format';

// The webhooks bench's figures: what the receipts and rows say, printed and written, and where a delivery's time went.

/** What the run's receipts and rows say: deliveries, losses, duplicates, latencies, where the time went. */
export async function figures(b: Bench, { emitSeconds, cpu, measured }: Awaited<ReturnType<typeof run>>, baseline: Baseline | null) {
  const { db } = await import('../../lib/db');
  const { workflowIds } = await import('../../lib/temporal/client');
  const { workspaceId, warm } = b;
  const expected = opt.events * opt.endpoints;
  const events = await db()('outbox_events').where({ workspace_id: workspaceId }).whereNot({ id: warm }).select('id', 'created_at');
  const createdAt = new Map(events.map((e: { id: string; created_at: Date }) => [e.id, e.created_at.getTime()]));
  const pairs = new Set<string>();
  let duplicates = 0;
  let badSignatures = 0;
  const latencies: number[] = [];
  for (const x of measured) {
    const key = `${x.eventId}/${x.endpoint}`;
    if (pairs.has(key)) {
      duplicates++;
      continue;
    }
    pairs.add(key);
    if (!x.signatureOk) badSignatures++;
    const c = createdAt.get(x.eventId);
    if (c !== undefined) latencies.push(x.receivedAt - c);
  }
  latencies.sort(byNumber);
  // Where the time goes, per delivery: commit → the relay wrote the delivery row (claim and
  // fan-out), → the first attempt began (workflow start and dispatch), → the receiver read it.
  const stages = (await db()('webhook_deliveries as d')
    .join('webhook_delivery_attempts as a', function () {
      this.on('a.delivery_id', '=', 'd.id').andOnVal('a.attempt', '=', 1);
    })
    .join('outbox_events as e', 'e.id', 'd.event_id')
    .where('d.workspace_id', workspaceId)
    .whereNot('d.event_id', warm)
    .select('e.id as event_id', 'd.endpoint_id', 'e.created_at', 'd.created_at as delivery_at', 'a.started_at')) as Array<{
    event_id: string;
    endpoint_id: string;
    created_at: Date;
    delivery_at: Date;
    started_at: Date;
  }>;
  const endpointIndex = new Map(b.endpoints.map((e, i) => [e.id, i]));
  const receivedAt = new Map(measured.map((x) => [`${x.eventId}/${x.endpoint}`, x.receivedAt]));
  const med = (xs: number[]) => percentile(xs.sort(byNumber), 50);
  const breakdown = {
    relayMs: med(stages.map((x) => x.delivery_at.getTime() - x.created_at.getTime())),
    startToAttemptMs: med(stages.map((x) => x.started_at.getTime() - x.delivery_at.getTime())),
    attemptToReceiptMs: med(
      stages
        .map((x) => (receivedAt.get(`${x.event_id}/${endpointIndex.get(x.endpoint_id)}`) ?? NaN) - x.started_at.getTime())
        .filter((x) => !Number.isNaN(x)),
    ),
  };
  // The same stages finer, from the endpoint workflows' histories (every run of each): the row
  // written → the relay's signal recorded by the server → the workflow task that took it
  // started on the worker → the pass began the attempt. A row picked up by a pass that was
  // already running has no signal or task of its own: those stages count as 0 for it.
  const fine: Awaited<ReturnType<typeof workflowStages>> = await workflowStages(
    b.client,
    b.endpoints.map((e) => e.id),
    (id) => workflowIds.webhookEndpoint(id),
    stages.map((x) => ({ ...x, received_at: receivedAt.get(`${x.event_id}/${endpointIndex.get(x.endpoint_id)}`) })),
  ).catch((err: Error) => {
    console.log(`  (stage breakdown from the histories unavailable: ${err.message})`);
    return {};
  });
  const statuses = (await db()('webhook_deliveries')
    .where({ workspace_id: workspaceId })
    .whereNot({ event_id: warm })
    .groupBy('status')
    .select('status')
    .count({ n: '*' })) as Array<{ status: string; n: string | number }>;
  const spanS = (Math.max(...measured.map((x) => x.receivedAt)) - Math.min(...createdAt.values())) / 1000;
  return {
    bench: 'webhooks',
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    events: opt.events,
    endpoints: opt.endpoints,
    rate: opt.rate || 'burst',
    expected,
    delivered: pairs.size,
    lost: expected - pairs.size,
    duplicates,
    badSignatures,
    deliveryRows: Object.fromEntries(statuses.map((s) => [s.status, Number(s.n)])),
    emitSeconds,
    spanSeconds: spanS,
    deliveredPerSecond: pairs.size / spanS,
    cpuMsPerDelivery: cpu
      ? Object.fromEntries(Object.entries(cpu.cpuMs).map(([k, v]) => [k, Math.round((v / pairs.size) * 100) / 100]))
      : null,
    machineBusy: cpu ? Math.round(cpu.machineBusy * 100) / 100 : null,
    latencyBreakdownP50Ms: breakdown,
    stagesMs: fine,
    baseline,
    ratioToBaseline: baseline ? pairs.size / spanS / baseline.perSecond : null,
    latencyMs: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1] ?? NaN,
      min: latencies[0] ?? NaN,
    },
  };
}

/** The figures on stdout and in bench/results/webhooks.json; the exit code says whether a check or (--strict) a target failed. */
export function report(result: Awaited<ReturnType<typeof figures>>) {
  const { expected, lost, duplicates, badSignatures, spanSeconds: spanS, latencyBreakdownP50Ms: breakdown, baseline } = result;
  console.log('');
  console.log(
    `  delivered        ${result.delivered} / ${expected}  (lost ${lost}, duplicates ${duplicates}, bad signatures ${badSignatures})`,
  );
  console.log(`  delivery rows    ${JSON.stringify(result.deliveryRows)}`);
  console.log(
    `  throughput       ${result.deliveredPerSecond.toFixed(0)} deliveries/s  (first event → last delivery ${spanS.toFixed(2)} s; emission took ${result.emitSeconds.toFixed(2)} s)`,
  );
  console.log(
    `  latency          p50 ${result.latencyMs.p50} ms · p90 ${result.latencyMs.p90} ms · p99 ${result.latencyMs.p99} ms · max ${result.latencyMs.max} ms  (event committed → receiver read the request)`,
  );
  console.log(
    `  latency p50 by stage  relay ${breakdown.relayMs} ms → workflow start and dispatch ${breakdown.startToAttemptMs} ms → POST ${breakdown.attemptToReceiptMs} ms`,
  );
  for (const [name, v] of Object.entries(result.stagesMs))
    console.log(
      `    ${name.padEnd(28)} p50 ${String(v.p50).padStart(6)} ms · p99 ${String(v.p99).padStart(6)} ms · max ${String(v.max).padStart(6)} ms`,
    );
  if (result.cpuMsPerDelivery) {
    const c = result.cpuMsPerDelivery;
    const own = (c.worker ?? 0) + (c.temporal ?? 0) + (c.postgres ?? 0);
    console.log(
      `  CPU per delivery worker ${c.worker} ms · Temporal ${c.temporal} ms · Postgres ${c.postgres} ms · receivers ${c.receivers} ms · other processes ${c.other} ms (machine ${Math.round((result.machineBusy ?? 0) * 100)}% busy)`,
    );
    console.log(
      `  capacity bound   ≈ ${Math.round((os.cpus().length * 1000) / own)} deliveries/s if worker, Temporal and Postgres had the ${os.cpus().length} cores to themselves`,
    );
  }
  const misses: string[] = [];
  if (baseline && result.ratioToBaseline !== null) {
    const ok = result.ratioToBaseline >= BURST_TARGET;
    if (!ok) misses.push('burst ratio');
    console.log(
      `  vs baseline      ${result.deliveredPerSecond.toFixed(0)} / ${baseline.perSecond.toFixed(0)} deliveries/s = ${result.ratioToBaseline.toFixed(2)}× (target ≥ ${BURST_TARGET}×: ${ok ? 'met' : 'MISSED'}); baseline p99 ${baseline.latencyMs.p99} ms`,
    );
  }
  if (opt.rate > 0) {
    const ok = result.latencyMs.p99 <= PACED_P99_TARGET_MS;
    if (!ok) misses.push('paced p99');
    console.log(
      `  paced target     p99 ${result.latencyMs.p99} ms (target ≤ ${PACED_P99_TARGET_MS} ms at 20 events/s; this run ${opt.rate}/s: ${ok ? 'met' : 'MISSED'})`,
    );
  }
  const out = writeResults('webhooks', result);
  console.log(`  written to ${path.relative(process.cwd(), out)}`);
  if (lost || duplicates || badSignatures) process.exitCode = 1;
  if (opt.strict && misses.length) {
    console.log(`  --strict: missed ${misses.join(', ')}`);
    process.exitCode = 1;
  }
}

/**
 * Per-delivery stage times from the endpoint workflows' histories: relay row → signal recorded,
 * signal → workflow task started, task started → attempt started (p50, p99, max in ms).
 */
export async function workflowStages(
  client: import('@temporalio/client').Client,
  endpointIds: string[],
  workflowIdOf: (endpointId: string) => string,
  deliveries: Array<{ endpoint_id: string; created_at: Date; delivery_at: Date; started_at: Date; received_at?: number }>,
): Promise<Record<string, { p50: number; p99: number; max: number }>> {
  const { tsToMs } = await import('@temporalio/common/lib/time');
  // temporal.api.enums.v1.EventType values (the proto package's namespace object is not a named ESM export).
  const T = { EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: 1, EVENT_TYPE_WORKFLOW_TASK_STARTED: 6, EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: 26 };
  const signals = new Map<string, number[]>();
  const tasks = new Map<string, number[]>();
  for (const id of endpointIds) {
    const s: number[] = [];
    const t: number[] = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowIdOf(id)}'` })) {
      const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      for (const e of history.events ?? []) {
        if (e.eventType === T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED || e.eventType === T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
          s.push(tsToMs(e.eventTime));
        if (e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_STARTED) t.push(tsToMs(e.eventTime));
      }
    }
    signals.set(id, s.sort(byNumber));
    tasks.set(id, t.sort(byNumber));
  }
  const firstAtOrAfter = (xs: number[], at: number) => xs.find((x) => x >= at);
  const commitToRow: number[] = [];
  const attemptToReceipt: number[] = [];
  const rowToSignal: number[] = [];
  const signalToTask: number[] = [];
  const taskToAttempt: number[] = [];
  for (const d of deliveries) {
    const row = d.delivery_at.getTime();
    const attempt = d.started_at.getTime();
    const signal = Math.min(firstAtOrAfter(signals.get(d.endpoint_id) ?? [], row) ?? attempt, attempt);
    const task = Math.min(firstAtOrAfter(tasks.get(d.endpoint_id) ?? [], signal) ?? attempt, attempt);
    commitToRow.push(row - d.created_at.getTime());
    if (d.received_at !== undefined) attemptToReceipt.push(d.received_at - attempt);
    rowToSignal.push(signal - row);
    signalToTask.push(task - signal);
    taskToAttempt.push(attempt - task);
  }
  const sum = (xs: number[]) => {
    const sorted = xs.sort(byNumber);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN };
  };
  return {
    'commit → relay row': sum(commitToRow),
    'row → signal recorded': sum(rowToSignal),
    'signal → workflow task': sum(signalToTask),
    'workflow task → attempt': sum(taskToAttempt),
    'attempt → receiver': sum(attemptToReceipt),
  };
}
