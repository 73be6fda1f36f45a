import os from 'node:os';
import path from 'node:path';
import type { Baseline, Bench, Run } from '../webhooks';
import { quantile, writeResults } from '../harness/format';

// The webhooks bench's figures: what the receipts and rows say, printed and written, and where a delivery's time went.

/** Burst drain rate of the service over the baseline's, at least. */
export const BURST_TARGET = 0.8;
/** Paced (issue 19: at 20 events/s), event committed → receiver, p99 at most. */
export const PACED_P99_TARGET_MS = 1_000;

/** The p-quantile (0..1) of xs, NaN for none. */
export const pct = (xs: number[], p: number) => quantile(xs, p) ?? NaN;
/** p50, p99 and max of xs, in ms. */
const spread = (xs: number[]) => ({ p50: pct(xs, 0.5), p99: pct(xs, 0.99), max: pct(xs, 1) });

interface Delivery {
  event_id: string;
  endpoint_id: string;
  created_at: Date;
  delivery_at: Date;
  started_at: Date;
}

/** What the run's receipts and rows say: deliveries, losses, duplicates, latencies, where the time went. */
export async function figures(b: Bench, { emitSeconds, cpu, measured }: Run, baseline: Baseline | null) {
  const { db } = await import('../../lib/db');
  const { opt, workspaceId, warm } = b;
  const expected = opt.events * opt.endpoints;
  const events = await db()('outbox_events').where({ workspace_id: workspaceId }).whereNot({ id: warm }).select('id', 'created_at');
  const createdAt = new Map(events.map((e: { id: string; created_at: Date }) => [e.id, e.created_at.getTime()]));
  const receivedAt = new Map<string, number>();
  let duplicates = 0;
  let badSignatures = 0;
  const latencies: number[] = [];
  for (const x of measured) {
    const key = `${x.eventId}/${x.endpoint}`;
    if (receivedAt.has(key)) duplicates++;
    else {
      if (!x.signatureOk) badSignatures++;
      const c = createdAt.get(x.eventId);
      if (c !== undefined) latencies.push(x.at - c);
    }
    receivedAt.set(key, x.at);
  }
  const delivered = receivedAt.size;
  // Where the time goes, per delivery: commit → the relay wrote the delivery row (claim and
  // fan-out), → the first attempt began (workflow start and dispatch), → the receiver read it.
  const stages = (await db()('webhook_deliveries as d')
    .join('webhook_delivery_attempts as a', function () {
      this.on('a.delivery_id', '=', 'd.id').andOnVal('a.attempt', '=', 1);
    })
    .join('outbox_events as e', 'e.id', 'd.event_id')
    .where('d.workspace_id', workspaceId)
    .whereNot('d.event_id', warm)
    .select('e.id as event_id', 'd.endpoint_id', 'e.created_at', 'd.created_at as delivery_at', 'a.started_at')) as Delivery[];
  const endpointIndex = new Map(b.endpoints.map((e, i) => [e.id, i]));
  const receivedOf = (x: Delivery) => receivedAt.get(`${x.event_id}/${endpointIndex.get(x.endpoint_id)}`);
  const commitToRow = stages.map((x) => x.delivery_at.getTime() - x.created_at.getTime());
  const attemptToReceipt = stages.filter((x) => receivedOf(x) !== undefined).map((x) => receivedOf(x)! - x.started_at.getTime());
  const startToAttempt = stages.map((x) => x.started_at.getTime() - x.delivery_at.getTime());
  const breakdown = {
    relayMs: pct(commitToRow, 0.5),
    startToAttemptMs: pct(startToAttempt, 0.5),
    attemptToReceiptMs: pct(attemptToReceipt, 0.5),
  };
  // The same stages finer, from the endpoint workflows' histories.
  const fine = await workflowStages(b, stages)
    .then((s) => ({ 'commit → relay row': spread(commitToRow), ...s, 'attempt → receiver': spread(attemptToReceipt) }))
    .catch((err: Error) => {
      console.log(`  (stage breakdown from the histories unavailable: ${err.message})`);
      return {};
    });
  const statuses = (await db()('webhook_deliveries')
    .where({ workspace_id: workspaceId })
    .whereNot({ event_id: warm })
    .groupBy('status')
    .select('status')
    .count({ n: '*' })) as Array<{ status: string; n: string | number }>;
  const spanS = (Math.max(...measured.map((x) => x.at)) - Math.min(...createdAt.values())) / 1000;
  return {
    bench: 'webhooks',
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    events: opt.events,
    endpoints: opt.endpoints,
    rate: opt.rate || 'burst',
    expected,
    delivered,
    lost: expected - delivered,
    duplicates,
    badSignatures,
    deliveryRows: Object.fromEntries(statuses.map((s) => [s.status, Number(s.n)])),
    emitSeconds,
    spanSeconds: spanS,
    deliveredPerSecond: delivered / spanS,
    cpuMsPerDelivery: cpu
      ? Object.fromEntries(Object.entries(cpu.cpuMs).map(([k, v]) => [k, Math.round((v / delivered) * 100) / 100]))
      : null,
    machineBusy: cpu ? Math.round(cpu.machineBusy * 100) / 100 : null,
    latencyBreakdownP50Ms: breakdown,
    stagesMs: fine,
    baseline,
    ratioToBaseline: baseline ? delivered / spanS / baseline.perSecond : null,
    latencyMs: {
      p50: pct(latencies, 0.5),
      p90: pct(latencies, 0.9),
      p99: pct(latencies, 0.99),
      max: pct(latencies, 1),
      min: pct(latencies, 0),
    },
    strict: opt.strict,
  };
}

/** The figures on stdout and in bench/results/webhooks.json; the exit code says whether a check or (--strict) a target failed. */
export function report({ strict, ...result }: Awaited<ReturnType<typeof figures>>) {
  const { expected, lost, duplicates, badSignatures, spanSeconds: spanS, latencyBreakdownP50Ms: breakdown, baseline } = result;
  const { p50, p90, p99, max } = result.latencyMs;
  const rate = result.deliveredPerSecond.toFixed(0);
  console.log('');
  console.log(
    `  delivered        ${result.delivered} / ${expected}  (lost ${lost}, duplicates ${duplicates}, bad signatures ${badSignatures})`,
  );
  console.log(`  delivery rows    ${JSON.stringify(result.deliveryRows)}`);
  console.log(
    `  throughput       ${rate} deliveries/s  (first event → last delivery ${spanS.toFixed(2)} s; emission took ${result.emitSeconds.toFixed(2)} s)`,
  );
  console.log(
    `  latency          p50 ${p50} ms · p90 ${p90} ms · p99 ${p99} ms · max ${max} ms  (event committed → receiver read the request)`,
  );
  console.log(
    `  latency p50 by stage  relay ${breakdown.relayMs} ms → workflow start and dispatch ${breakdown.startToAttemptMs} ms → POST ${breakdown.attemptToReceiptMs} ms`,
  );
  const ms = (x: number) => `${String(x).padStart(6)} ms`;
  for (const [name, v] of Object.entries(result.stagesMs))
    console.log(`    ${name.padEnd(28)} p50 ${ms(v.p50)} · p99 ${ms(v.p99)} · max ${ms(v.max)}`);
  const c = result.cpuMsPerDelivery;
  if (c) {
    console.log(
      `  CPU per delivery worker ${c.worker} ms · Temporal ${c.temporal} ms · Postgres ${c.postgres} ms · receivers ${c.receivers} ms · other processes ${c.other} ms (machine ${Math.round((result.machineBusy ?? 0) * 100)}% busy)`,
    );
    const own = (c.worker ?? 0) + (c.temporal ?? 0) + (c.postgres ?? 0);
    console.log(
      `  capacity bound   ≈ ${Math.round((os.cpus().length * 1000) / own)} deliveries/s if worker, Temporal and Postgres had the ${os.cpus().length} cores to themselves`,
    );
  }
  const misses: string[] = [];
  const target = (name: string, ok: boolean) => {
    if (!ok) misses.push(name);
    return ok ? 'met' : 'MISSED';
  };
  if (baseline && result.ratioToBaseline !== null)
    console.log(
      `  vs baseline      ${rate} / ${baseline.perSecond.toFixed(0)} deliveries/s = ${result.ratioToBaseline.toFixed(2)}× (target ≥ ${BURST_TARGET}×: ${target('burst ratio', result.ratioToBaseline >= BURST_TARGET)}); baseline p99 ${baseline.latencyMs.p99} ms`,
    );
  if (result.rate !== 'burst')
    console.log(
      `  paced target     p99 ${p99} ms (target ≤ ${PACED_P99_TARGET_MS} ms at 20 events/s; this run ${result.rate}/s: ${target('paced p99', p99 <= PACED_P99_TARGET_MS)})`,
    );
  console.log(`  written to ${path.relative(process.cwd(), writeResults('webhooks', result))}`);
  if (lost || duplicates || badSignatures) process.exitCode = 1;
  if (strict && misses.length) {
    console.log(`  --strict: missed ${misses.join(', ')}`);
    process.exitCode = 1;
  }
}

/**
 * Per-delivery stage times from the endpoint workflows' histories (every run of each): the row
 * written → the relay's signal recorded by the server → the workflow task that took it started on
 * the worker → the pass began the attempt. A row picked up by a pass that was already running
 * has no signal or task of its own: those stages count as 0 for it.
 */
async function workflowStages({ client, endpoints }: Bench, deliveries: Delivery[]) {
  const { tsToMs } = await import('@temporalio/common/lib/time');
  const { workflowIds } = await import('../../lib/temporal/client');
  // temporal.api.enums.v1.EventType: workflow execution started 1, workflow task started 6, signaled 26.
  const signals = new Map<string, number[]>();
  const tasks = new Map<string, number[]>();
  for (const { id } of endpoints) {
    const [s, t]: number[][] = [[], []];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowIds.webhookEndpoint(id)}'` }))
      for (const e of (await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ?? []) {
        if (e.eventType === 26 || e.eventType === 1) s.push(tsToMs(e.eventTime));
        if (e.eventType === 6) t.push(tsToMs(e.eventTime));
      }
    signals.set(
      id,
      s.sort((x, y) => x - y),
    );
    tasks.set(
      id,
      t.sort((x, y) => x - y),
    );
  }
  const firstAtOrAfter = (xs: number[], at: number) => xs.find((x) => x >= at);
  const [rowToSignal, signalToTask, taskToAttempt]: number[][] = [[], [], []];
  for (const d of deliveries) {
    const row = d.delivery_at.getTime();
    const attempt = d.started_at.getTime();
    const signal = Math.min(firstAtOrAfter(signals.get(d.endpoint_id) ?? [], row) ?? attempt, attempt);
    const task = Math.min(firstAtOrAfter(tasks.get(d.endpoint_id) ?? [], signal) ?? attempt, attempt);
    rowToSignal.push(signal - row);
    signalToTask.push(task - signal);
    taskToAttempt.push(attempt - task);
  }
  return {
    'row → signal recorded': spread(rowToSignal),
    'signal → workflow task': spread(signalToTask),
    'workflow task → attempt': spread(taskToAttempt),
  };
}
