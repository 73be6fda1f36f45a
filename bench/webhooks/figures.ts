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

type Delivery = { event_id: string; endpoint_id: string; created_at: Date; delivery_at: Date; started_at: Date };

// What the run's receipts and rows say (deliveries, losses, duplicates, latencies, where the time went), on stdout and in
// bench/results/webhooks.json; the exit code says whether a check or (--strict) a target failed.
export async function report(b: Bench, { emitSeconds, cpu, measured }: Run, baseline: Baseline | null) {
  const { db } = await import('../../lib/db');
  const { opt, workspaceId, warm } = b;
  const expected = opt.events * opt.endpoints;
  const events = await db()('outbox_events').where({ workspace_id: workspaceId }).whereNot({ id: warm }).select('id', 'created_at');
  const createdAt = new Map(events.map((e: { id: string; created_at: Date }) => [e.id, e.created_at.getTime()]));
  const receivedAt = new Map<string, number>();
  let [duplicates, badSignatures] = [0, 0];
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
  const stages: Delivery[] = await db()('webhook_deliveries as d')
    .join('webhook_delivery_attempts as a', function () {
      this.on('a.delivery_id', '=', 'd.id').andOnVal('a.attempt', '=', 1);
    })
    .join('outbox_events as e', 'e.id', 'd.event_id')
    .where('d.workspace_id', workspaceId)
    .whereNot('d.event_id', warm)
    .select('e.id as event_id', 'd.endpoint_id', 'e.created_at', 'd.created_at as delivery_at', 'a.started_at');
  const endpointIndex = new Map(b.endpoints.map((e, i) => [e.id, i]));
  const receivedOf = (x: Delivery) => receivedAt.get(`${x.event_id}/${endpointIndex.get(x.endpoint_id)}`);
  const commitToRow = spread(stages.map((x) => x.delivery_at.getTime() - x.created_at.getTime()));
  const attemptToReceipt = spread(stages.filter((x) => receivedOf(x) !== undefined).map((x) => receivedOf(x)! - x.started_at.getTime()));
  const startToAttempt = spread(stages.map((x) => x.started_at.getTime() - x.delivery_at.getTime()));
  const breakdown = { relayMs: commitToRow.p50, startToAttemptMs: startToAttempt.p50, attemptToReceiptMs: attemptToReceipt.p50 };
  // The same stages finer, from the endpoint workflows' histories.
  const fine = await workflowStages(b, stages)
    .then((s) => ({ 'commit → relay row': commitToRow, ...s, 'attempt → receiver': attemptToReceipt }))
    .catch((err: Error) => {
      console.log(`  (stage breakdown from the histories unavailable: ${err.message})`);
      return {};
    });
  const statuses: Array<{ status: string; n: string | number }> = await db()('webhook_deliveries')
    .where({ workspace_id: workspaceId })
    .whereNot({ event_id: warm })
    .groupBy('status')
    .select('status')
    .count({ n: '*' });
  const spanS = (Math.max(...measured.map((x) => x.at)) - Math.min(...createdAt.values())) / 1000;
  const rate = delivered / spanS;
  const c = cpu && Object.fromEntries(Object.entries(cpu.cpuMs).map(([k, v]) => [k, Math.round((v / delivered) * 100) / 100]));
  const ratio = baseline ? rate / baseline.perSecond : null;
  const lat = (p: number) => pct(latencies, p);
  const [p50, p90, p99, max] = [lat(0.5), lat(0.9), lat(0.99), lat(1)];
  const result = {
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
    deliveredPerSecond: rate,
    cpuMsPerDelivery: c,
    machineBusy: cpu ? Math.round(cpu.machineBusy * 100) / 100 : null,
    latencyBreakdownP50Ms: breakdown,
    stagesMs: fine,
    baseline,
    ratioToBaseline: ratio,
    latencyMs: { p50, p90, p99, max, min: lat(0) },
  };

  console.log(`
  delivered        ${delivered} / ${expected}  (lost ${result.lost}, duplicates ${duplicates}, bad signatures ${badSignatures})
  delivery rows    ${JSON.stringify(result.deliveryRows)}
  throughput       ${rate.toFixed(0)} deliveries/s  (first event → last delivery ${spanS.toFixed(2)} s; emission took ${emitSeconds.toFixed(2)} s)
  latency          p50 ${p50} ms · p90 ${p90} ms · p99 ${p99} ms · max ${max} ms  (event committed → receiver read the request)
  latency p50 by stage  relay ${breakdown.relayMs} ms → workflow start and dispatch ${breakdown.startToAttemptMs} ms → POST ${breakdown.attemptToReceiptMs} ms`);
  const ms = (x: number) => `${String(x).padStart(6)} ms`;
  for (const [name, v] of Object.entries(fine))
    console.log(`    ${name.padEnd(28)} p50 ${ms(v.p50)} · p99 ${ms(v.p99)} · max ${ms(v.max)}`);
  if (c)
    console.log(`  CPU per delivery worker ${c.worker} ms · Temporal ${c.temporal} ms · Postgres ${c.postgres} ms · receivers ${c.receivers} ms · other processes ${c.other} ms (machine ${Math.round((result.machineBusy ?? 0) * 100)}% busy)
  capacity bound   ≈ ${Math.round((os.cpus().length * 1000) / ((c.worker ?? 0) + (c.temporal ?? 0) + (c.postgres ?? 0)))} deliveries/s if worker, Temporal and Postgres had the ${os.cpus().length} cores to themselves`);
  const misses: string[] = [];
  const target = (name: string, ok: boolean) => (ok ? 'met' : (misses.push(name), 'MISSED'));
  if (baseline && ratio !== null)
    console.log(
      `  vs baseline      ${rate.toFixed(0)} / ${baseline.perSecond.toFixed(0)} deliveries/s = ${ratio.toFixed(2)}× (target ≥ ${BURST_TARGET}×: ${target('burst ratio', ratio >= BURST_TARGET)}); baseline p99 ${baseline.latencyMs.p99} ms`,
    );
  if (result.rate !== 'burst')
    console.log(
      `  paced target     p99 ${p99} ms (target ≤ ${PACED_P99_TARGET_MS} ms at 20 events/s; this run ${result.rate}/s: ${target('paced p99', p99 <= PACED_P99_TARGET_MS)})`,
    );
  console.log(`  written to ${path.relative(process.cwd(), writeResults('webhooks', result))}`);
  if (result.lost || duplicates || badSignatures) process.exitCode = 1;
  if (opt.strict && misses.length) {
    console.log(`  --strict: missed ${misses.join(', ')}`);
    process.exitCode = 1;
  }
}

// Per-delivery stage times from the endpoint workflows' histories (every run of each): the row written → the relay's signal
// recorded by the server → the workflow task that took it started on the worker → the pass began the attempt. A row picked up
// by a pass already running has no signal or task of its own: those stages count as 0 for it.
async function workflowStages({ client, endpoints }: Bench, deliveries: Delivery[]) {
  const { tsToMs } = await import('@temporalio/common/lib/time');
  const { workflowIds } = await import('../../lib/temporal/client');
  // temporal.api.enums.v1.EventType: workflow execution started 1, workflow task started 6, signaled 26.
  const history = new Map<string, Array<{ type: number; at: number }>>();
  for (const { id } of endpoints) {
    const events: Array<{ type: number; at: number }> = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowIds.webhookEndpoint(id)}'` }))
      for (const e of (await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ?? [])
        events.push({ type: Number(e.eventType), at: tsToMs(e.eventTime) });
    history.set(
      id,
      events.sort((x, y) => x.at - y.at),
    );
  }
  /** When the first event of `types` in `endpoint`'s histories at or after `from` came, no later than `attempt`. */
  const first = (endpoint: string, types: number[], from: number, attempt: number) =>
    Math.min(history.get(endpoint)?.find((e) => types.includes(e.type) && e.at >= from)?.at ?? attempt, attempt);
  const [rowToSignal, signalToTask, taskToAttempt]: number[][] = [[], [], []];
  for (const d of deliveries) {
    const [row, attempt] = [d.delivery_at.getTime(), d.started_at.getTime()];
    const signal = first(d.endpoint_id, [1, 26], row, attempt);
    const task = first(d.endpoint_id, [6], signal, attempt);
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
