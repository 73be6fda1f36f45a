// Bench: does one workspace's burst delay another workspace's work? bench/README.md "fairness".

import { setTimeout as sleep } from 'node:timers/promises';
import type { Cleanups } from './harness/cleanups';
import { loadAverage, quantile, step } from './harness/format';
import { benchFlags } from './harness/options';
import { machineInfo } from './harness/proc';
import { apiClient, reserveStack, runBench, startStack } from './harness/stack';
import { temporalKind } from './harness/temporal';
import { generationPhase, publishingPhase, startReceivers, webhooksPhase, type Ctx, type Phase, type Tenant } from './fairness/scenarios';
import { PHASES } from './publishing/history';
import { freePort } from '../tooling/ports';

const TARGET = 1.5;
const SCENARIOS = { publishing: publishingPhase, generation: generationPhase, webhooks: webhooksPhase } as const;
type Scenario = keyof typeof SCENARIOS;
const count = { min: 1, integer: true } as const;

const opt = benchFlags(
  "fairness: the quiet workspaces' lag beside a noisy workspace's burst, over their lag alone.",
  {
    scenarios: {
      default: 'publishing,generation,webhooks',
      arg: 'LIST',
      help: 'publishing,generation,webhooks (default all three, in that order)',
    },
    burst: { default: 10000, ...count, help: 'posts the noisy workspace schedules for the minute' },
    quiet: { default: 10, ...count, help: 'quiet workspaces' },
    'quiet-posts': { default: 20, ...count, help: 'posts each quiet workspace schedules for the same minute' },
    'noisy-projects': { default: 10, ...count, help: "the noisy workspace's connected accounts its posts go round" },
    jobs: { default: 200, ...count, help: 'generation jobs the noisy workspace queues (default 200); each quiet one queues 1' },
    events: { default: 2000, ...count, help: "events for the noisy workspace's slow, failing endpoint" },
    'quiet-events': { default: 20, ...count, help: "events for each quiet workspace's healthy endpoint" },
    'slow-ms': { default: 1000, integer: true, arg: 'MS', help: 'how long the noisy endpoint takes to answer' },
    lead: {
      default: 0,
      arg: 'S',
      help: `seconds from creation to the due minute (default: room for the posts at the last
        phase's creation rate, half again, plus 15 s)`,
    },
    timeout: { default: 900, ...count, arg: 'S', help: 'give up on a phase after S seconds' },
    'no-fairness': {
      type: 'boolean',
      help: `the dev server without matching.enableFairness and every start without a
        priority (TEMPORAL_FAIRNESS=false): first come, first served, the before figure`,
    },
    temporal: {
      default: 'dev',
      arg: 'dev|cluster',
      help: `the dev server in memory (default) or the cluster tier on Postgres
        (tooling/temporalCluster.ts, databases bench_fair_temporal*, its dynamic config
        and the production task queue name); --no-fairness there only drops the keys`,
    },
    strict: { type: 'boolean', help: `exit 1 when a scenario misses the target (quiet p99 with noisy ≤ ${TARGET}× alone)` },
  },
  `Environment: BENCH_FAIR_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_fair,
             dropped and recreated), BENCH_FAIR_REDIS_URL (default redis://127.0.0.1:6379/9, flushed),
             DB_POOL_MAX (each service process's pool, lib/config.ts; 10 leaves room on a shared Postgres).`,
);

const FAIRNESS = !opt['no-fairness'];
const TEMPORAL = temporalKind(opt.temporal);
// On the cluster the production queue name, so that its dynamic config's per-queue settings apply.
const TASK_QUEUE = TEMPORAL === 'cluster' ? 'content-scheduler' : 'bench-fairness';
const scenarios = opt.scenarios.split(',').map((s) => s.trim()) as Scenario[];
for (const s of scenarios) if (!(s in SCENARIOS)) throw new Error(`unknown scenario ${s}; known: ${Object.keys(SCENARIOS).join(', ')}`);

const DATABASE_URL = process.env.BENCH_FAIR_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_fair';
const REDIS_URL = process.env.BENCH_FAIR_REDIS_URL ?? 'redis://127.0.0.1:6379/9';

const pct = (values: number[], p: number) => quantile(values, p / 100) ?? NaN;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const lags = (p: Phase) => `p50 ${secs(pct(p.lagsMs, 50))}, p99 ${secs(pct(p.lagsMs, 99))}`;

runBench(
  () => 'fairness',
  async (cleanups) => {
    const m = machineInfo();
    console.log(
      `fairness bench — ${m.cpus} × ${m.cpuModel}, Node ${m.node}, load average ${loadAverage(1)} at start; ` +
        `task queue fairness ${FAIRNESS ? 'ON (matching.enableFairness, starts keyed by workspace)' : 'OFF (--no-fairness: first come, first served)'}`,
    );
    const ctx = await setUp(cleanups);
    let missed = 0;
    for (const scenario of scenarios) {
      step(`${scenario}: the quiet workspaces alone`);
      const alone = await SCENARIOS[scenario](ctx, false);
      step(`${scenario}: the same beside the noisy workspace`);
      const noisy = await SCENARIOS[scenario](ctx, true);
      if (!report(scenario, alone, noisy)) missed++;
    }
    console.log(`load average at the end ${loadAverage(1)} (a shared machine: compare ratios within one run)`);
    return opt.strict && missed ? 1 : 0;
  },
);

function report(scenario: Scenario, alone: Phase, noisy: Phase): boolean {
  const ratio = pct(noisy.lagsMs, 99) / pct(alone.lagsMs, 99);
  const size = {
    publishing: `${opt.burst} posts`,
    generation: `${opt.jobs} jobs`,
    webhooks: `${opt.events} events to a slow, failing endpoint`,
  }[scenario];
  console.log(
    `  quiet lag alone: ${lags(alone)} (${alone.lagsMs.length} items); beside the noisy workspace (${size}): ${lags(noisy)}` +
      (noisy.noisyDrainS !== undefined ? `; the noisy workspace's last item done after ${noisy.noisyDrainS.toFixed(1)} s` : ''),
  );
  if (alone.breakdown && noisy.breakdown) {
    // Where the quiet posts' lag went, alone and beside the burst (bench/README.md "fairness").
    console.log(`  where the quiet lag went (their publish workflows' histories), p50 / p99 ms: alone | beside the noisy workspace`);
    const ms = (v: number | null) => (v === null ? '–' : Math.round(v).toLocaleString('en-US'));
    for (const key of Object.keys(PHASES) as (keyof typeof PHASES)[]) {
      const [a, n] = [alone.breakdown[key], noisy.breakdown[key]];
      // The publish step runs as a local activity inside the workflow task (workflows/publishPost.ts): no activity events.
      if (a.p50 === null && n.p50 === null) continue;
      console.log(`    ${PHASES[key][0].trim().padEnd(40)} ${`${ms(a.p50)} / ${ms(a.p99)}`.padStart(15)} | ${ms(n.p50)} / ${ms(n.p99)}`);
    }
  }
  for (const note of [...alone.notes, ...noisy.notes]) console.log(`  ! ${note}`);
  if (alone.unfinished || noisy.unfinished)
    console.log(`  ! unfinished within --timeout: ${alone.unfinished} alone, ${noisy.unfinished} with noisy`);
  console.log(
    `fairness ${scenario}: quiet p99 with noisy / alone: ${ratio.toFixed(2)}× (target ≤ ${TARGET}×, fairness ${FAIRNESS ? 'on' : 'off'})`,
  );
  return ratio <= TARGET;
}

async function setUp(cleanups: Cleanups): Promise<Ctx> {
  const reserved = await reserveStack({
    kind: TEMPORAL,
    databaseUrl: DATABASE_URL,
    redisUrl: REDIS_URL,
    taskQueue: TASK_QUEUE,
    clusterDatabase: 'bench_fair_temporal',
    fairness: FAIRNESS,
    // The receivers are local: the explicit loopback allowance.
    env: { TEMPORAL_FAIRNESS: String(FAIRNESS), LLM_WRITER: 'builtin', WEBHOOK_ALLOW_LOOPBACK: '1' },
  });
  const [apiPort, mcpPort, apiMetrics, workerMetrics] = await Promise.all(Array.from({ length: 4 }, () => freePort()));
  step(`database ${new URL(DATABASE_URL).pathname.slice(1)} (recreated, migrated), Redis ${REDIS_URL} (flushed)`);
  const { temporal, simulator, client } = await startStack(reserved, cleanups);
  step(
    TEMPORAL === 'cluster'
      ? `${temporal.describe}; task queue ${TASK_QUEUE}${FAIRNESS ? ', matching.enableFairness=true' : ', starts without fairness keys'}`
      : `Temporal dev server ${temporal.address} (in memory)${FAIRNESS ? ' with matching.enableFairness=true' : ' without fairness'}`,
  );
  const receivers = await startReceivers(opt['slow-ms']);
  cleanups.push(() => receivers.close());

  const { db } = await import('../lib/db');
  const { connectedWorkspace, webhookEndpoint } = await import('./harness/seed');
  const { EVENT_TYPES } = await import('../lib/outbox');
  // Its people numbered across the workspaces, the noisy one's first.
  const tenant = async (name: string, accounts: number, url: string, first: number): Promise<Tenant> => {
    const person = (i: number) => ({ personId: `fair${first + i}`, name: `Fair Person ${first + i}`, vanityName: `fair-${first + i}` });
    const ws = await connectedWorkspace(simulator.control, {
      name,
      accounts,
      person,
      scopes: ['read', 'write'],
      keyName: 'fairness bench',
    });
    // Caps high enough never to refuse a generation.
    await db()('workspaces').where({ id: ws.id }).update({ daily_spend_cap_cents: 1_000_000_000, weekly_ai_budget_cents: 1_000_000_000 });
    await webhookEndpoint(ws.id, url, EVENT_TYPES);
    return ws;
  };
  const noisy = await tenant('Noisy Co', opt['noisy-projects'], receivers.slowUrl, 0);
  const quiet: Tenant[] = [];
  for (let i = 0; i < opt.quiet; i++) quiet.push(await tenant(`Quiet ${i + 1}`, 1, receivers.healthyUrl, opt['noisy-projects'] + i));
  step(
    `workspaces: 1 noisy (${opt['noisy-projects']} connected accounts, endpoint slow and failing) and ${opt.quiet} quiet (1 account, healthy endpoint each)`,
  );

  const { startFleet } = await import('../tooling/serviceFleet');
  const fleet = await startFleet({
    env: process.env,
    apis: [{ port: apiPort!, mcpPort: mcpPort!, metricsPort: apiMetrics! }],
    workers: [workerMetrics!],
    log: () => {},
  });
  cleanups.push(() => fleet.stop());
  step(`service: API pid ${fleet.apis[0]!.child.pid} on ${apiPort}, worker pid ${fleet.workers[0]!.child.pid} (tooling/serviceFleet.ts)`);

  const api = apiClient(apiPort!, 64);
  cleanups.push(async () => api.close());
  // A port found free at the start may have been taken by another process before the API bound
  // it (a shared machine): make sure the one listening is ours (it stamps every answer).
  const probe = await fetch(`http://127.0.0.1:${apiPort}/v1/posts`);
  if (!probe.headers.get('x-request-id'))
    throw new Error(`port ${apiPort} is answered by another process (${probe.status} ${(await probe.text()).slice(0, 80)}); run again`);
  await probe.body?.cancel();
  const ctx: Ctx = { api, db: db(), temporal: client, noisy, quiet, sizes: opt, receivers, createdPerS: 10 };

  // One item down every path before any clock starts, on a copy of the context (one post is no creation rate).
  const t0 = Date.now();
  const warm = { ...ctx, quiet: quiet.slice(0, 1), sizes: { ...opt, 'quiet-posts': 1, 'quiet-events': 1, lead: 5, timeout: 180 } };
  for (const [name, phase] of Object.entries(SCENARIOS))
    if ((await phase(warm, false)).unfinished) throw new Error(`warm-up: the ${name} item was not done within 180 s (is the worker up?)`);
  await sleep(1000);
  step(`warm-up: one post, one generation and one webhook through the service in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return ctx;
}
