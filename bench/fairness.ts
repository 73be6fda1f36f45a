// Bench: fairness between workspaces (docs/operations.md "Fairness between workspaces") — does
// one workspace's burst delay another workspace's work? Three scenarios, each measured twice in
// the same run on the same service: the quiet workspaces' work alone, then the same work beside
// the noisy workspace's burst.
//
//   npm run bench -- fairness                              every scenario at full size
//   npm run bench -- fairness --burst 2000 --jobs 100      smaller (a shared machine)
//   npm run bench -- fairness --no-fairness                the same, first come, first served (the before figure)
//   npm run bench -- fairness --help                       every option
//
// - publishing: the noisy workspace schedules --burst posts (10,000) due in minute T; ten quiet
//   workspaces schedule --quiet-posts (20) each, due at T. Lag: published_at − scheduled_at.
// - generation: the noisy workspace queues --jobs (200) generations, then each quiet workspace
//   queues one. Lag: completed_at − created_at of the job.
// - webhooks: the noisy workspace's endpoint answers after --slow-ms and fails every other
//   request; it gets --events (2,000) events, then each quiet workspace --quiet-events (20) for
//   its healthy endpoint. Lag: event committed → the receiver has read it.
//
// Prints `fairness <scenario>: quiet p99 with noisy / alone: N.NN×` (target ≤ 1.5×). Everything is
// the bench's own: Postgres database content_scheduler_bench_fair (dropped and recreated), Redis
// db 9 (flushed), a Temporal dev server (in memory; without matching.enableFairness under
// --no-fairness) or the cluster tier (--temporal cluster), the network simulator in this
// process, and the service as production runs it: one API and one worker
// (tooling/serviceFleet.ts), with TEMPORAL_FAIRNESS=false under --no-fairness.

import http from 'node:http';
import os from 'node:os';
import { Cleanups } from './harness/cleanups';
import { closeStores, resetStores, setPublishingEnvironment } from './harness/database';
import { machineInfo } from './harness/proc';
import { requestText } from './harness/load';
import { benchOptions, numberOption } from './harness/options';
import { generationPhase, publishingPhase, startReceivers, webhooksPhase, type Ctx, type Phase, type Tenant } from './fairness/scenarios';
import { freePort } from '../tooling/ports';
import { reserveTemporal, startBenchTemporal, temporalKind } from './harness/temporal';
import { setTimeout as sleep } from 'node:timers/promises';
import { quantile, step } from './harness/format';

const TARGET = 1.5;
const SCENARIOS = { publishing: publishingPhase, generation: generationPhase, webhooks: webhooksPhase } as const;
type Scenario = keyof typeof SCENARIOS;

const opt = benchOptions(
  {
    scenarios: { type: 'string', default: 'publishing,generation,webhooks' },
    burst: { type: 'string', default: '10000' },
    quiet: { type: 'string', default: '10' },
    'quiet-posts': { type: 'string', default: '20' },
    'noisy-projects': { type: 'string', default: '10' },
    jobs: { type: 'string', default: '200' },
    events: { type: 'string', default: '2000' },
    'quiet-events': { type: 'string', default: '20' },
    'slow-ms': { type: 'string', default: '1000' },
    lead: { type: 'string', default: '0' },
    timeout: { type: 'string', default: '900' },
    'no-fairness': { type: 'boolean', default: false },
    temporal: { type: 'string', default: 'dev' },
    strict: { type: 'boolean', default: false },
  },
  `fairness: the quiet workspaces' lag beside a noisy workspace's burst, over their lag alone.

Options:
  --scenarios LIST      publishing,generation,webhooks (default all three, in that order)
  --burst N             posts the noisy workspace schedules for the minute (default 10000)
  --quiet N             quiet workspaces (default 10)
  --quiet-posts N       posts each quiet workspace schedules for the same minute (default 20)
  --noisy-projects N    the noisy workspace's connected accounts its posts go round (default 10)
  --jobs N              generation jobs the noisy workspace queues (default 200); each quiet one queues 1
  --events N            events for the noisy workspace's slow, failing endpoint (default 2000)
  --quiet-events N      events for each quiet workspace's healthy endpoint (default 20)
  --slow-ms MS          how long the noisy endpoint takes to answer (default 1000)
  --lead S              seconds from creation to the due minute (default: room for the posts at the last
                        phase's creation rate, half again, plus 15 s)
  --timeout S           give up on a phase after S seconds (default 900)
  --no-fairness         the dev server without matching.enableFairness and every start without a
                        priority (TEMPORAL_FAIRNESS=false): first come, first served, the before figure
  --temporal dev|cluster  the dev server in memory (default) or the cluster tier on Postgres
                        (tooling/temporalCluster.ts, databases bench_fair_temporal*, its dynamic config
                        and the production task queue name); --no-fairness there only drops the keys
  --strict              exit 1 when a scenario misses the target (quiet p99 with noisy ≤ ${TARGET}× alone)

Environment: BENCH_FAIR_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_fair,
             dropped and recreated), BENCH_FAIR_REDIS_URL (default redis://127.0.0.1:6379/9, flushed),
             DB_POOL_MAX (each service process's pool, lib/config.ts; 10 leaves room on a shared Postgres).`,
);

const int = (name: string, min = 1) => numberOption(opt, name, { min, integer: true });
const FAIRNESS = !opt['no-fairness'];
const TEMPORAL = temporalKind(opt.temporal);
// On the cluster the production queue name, so that its dynamic config's per-queue settings apply.
const TASK_QUEUE = TEMPORAL === 'cluster' ? 'content-scheduler' : 'bench-fairness';
const sizes = {
  burst: int('burst'),
  quietPosts: int('quiet-posts'),
  jobs: int('jobs'),
  events: int('events'),
  quietEvents: int('quiet-events'),
  timeoutS: int('timeout'),
  leadS: numberOption(opt, 'lead'),
};
const QUIET = int('quiet');
const NOISY_PROJECTS = int('noisy-projects');
const SLOW_MS = int('slow-ms', 0);
const scenarios = opt.scenarios.split(',').map((s) => s.trim()) as Scenario[];
for (const s of scenarios) if (!(s in SCENARIOS)) throw new Error(`unknown scenario ${s}; known: ${Object.keys(SCENARIOS).join(', ')}`);

const DATABASE_URL = process.env.BENCH_FAIR_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_fair';
const REDIS_URL = process.env.BENCH_FAIR_REDIS_URL ?? 'redis://127.0.0.1:6379/9';

const pct = (values: number[], p: number) => quantile(values, p / 100) ?? NaN;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main() {
  const m = machineInfo();
  console.log(
    `fairness bench — ${m.cpus} × ${m.cpuModel}, Node ${m.node}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at start; ` +
      `task queue fairness ${FAIRNESS ? 'ON (matching.enableFairness, starts keyed by workspace)' : 'OFF (--no-fairness: first come, first served)'}`,
  );
  const cleanups = new Cleanups();
  process.once('SIGINT', () => void cleanups.run().then(() => process.exit(130)));
  let missed = 0;
  try {
    const ctx = await setUp(cleanups);
    for (const scenario of scenarios) {
      step(`${scenario}: the quiet workspaces alone`);
      const alone = await SCENARIOS[scenario](ctx, false);
      step(`${scenario}: the same beside the noisy workspace`);
      const noisy = await SCENARIOS[scenario](ctx, true);
      if (!report(scenario, alone, noisy)) missed++;
    }
    console.log(
      `load average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (a shared machine: compare ratios within one run)`,
    );
  } finally {
    await cleanups.run();
    await closeStores();
  }
  if (opt.strict && missed) process.exit(1);
}

function report(scenario: Scenario, alone: Phase, noisy: Phase): boolean {
  const ratio = pct(noisy.lagsMs, 99) / pct(alone.lagsMs, 99);
  const size = {
    publishing: `${sizes.burst} posts`,
    generation: `${sizes.jobs} jobs`,
    webhooks: `${sizes.events} events to a slow, failing endpoint`,
  }[scenario];
  console.log(
    `  quiet lag alone: p50 ${secs(pct(alone.lagsMs, 50))}, p99 ${secs(pct(alone.lagsMs, 99))} (${alone.lagsMs.length} items); ` +
      `beside the noisy workspace (${size}): p50 ${secs(pct(noisy.lagsMs, 50))}, p99 ${secs(pct(noisy.lagsMs, 99))}` +
      (noisy.noisyDrainS !== undefined ? `; the noisy workspace's last item done after ${noisy.noisyDrainS.toFixed(1)} s` : ''),
  );
  for (const note of [...alone.notes, ...noisy.notes]) console.log(`  ! ${note}`);
  if (alone.unfinished || noisy.unfinished)
    console.log(`  ! unfinished within --timeout: ${alone.unfinished} alone, ${noisy.unfinished} with noisy`);
  console.log(
    `fairness ${scenario}: quiet p99 with noisy / alone: ${ratio.toFixed(2)}× (target ≤ ${TARGET}×, fairness ${FAIRNESS ? 'on' : 'off'})`,
  );
  return ratio <= TARGET;
}

async function setUp(cleanups: Cleanups): Promise<Ctx> {
  // lib/config reads the environment once, at import: every address and switch is set before the
  // first app module loads; the fleet's API and worker inherit the same environment.
  const reserved = await reserveTemporal(TEMPORAL);
  const [simPort, apiPort, mcpPort, apiMetrics, workerMetrics] = await Promise.all(Array.from({ length: 5 }, () => freePort()));
  setPublishingEnvironment(
    { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL, temporalPort: reserved.port, taskQueue: TASK_QUEUE, simPort: simPort! },
    {
      TEMPORAL_FAIRNESS: String(FAIRNESS),
      LLM_WRITER: 'builtin',
      // The receivers are local: the explicit loopback allowance.
      WEBHOOK_ALLOW_LOOPBACK: '1',
    },
  );
  step(`database ${new URL(DATABASE_URL).pathname.slice(1)} (recreated, migrated), Redis ${REDIS_URL} (flushed)`);
  await resetStores(DATABASE_URL, REDIS_URL);

  const temporal = await startBenchTemporal(reserved, {
    databaseUrl: DATABASE_URL,
    databaseName: 'bench_fair_temporal',
    fairness: FAIRNESS,
    log: (l) => console.log(`  [temporal] ${l}`),
  });
  cleanups.push(() => temporal.stop());
  step(
    TEMPORAL === 'cluster'
      ? `${temporal.describe}; task queue ${TASK_QUEUE}${FAIRNESS ? ', matching.enableFairness=true' : ', starts without fairness keys'}`
      : `Temporal dev server ${temporal.address} (in memory)${FAIRNESS ? ' with matching.enableFairness=true' : ' without fairness'}`,
  );

  const { startNetworkSimulator } = await import('../sim/network/server');
  const simulator = await startNetworkSimulator({ port: simPort! });
  cleanups.push(() => simulator.close());
  const receivers = await startReceivers(SLOW_MS);
  cleanups.push(() => receivers.close());

  const { db } = await import('../lib/db');
  const { issueApiKey, createWorkspace } = await import('../admin/provision');
  const { connectedPersonalProject } = await import('../admin/simulatedAccounts');
  const { webhookEndpoint } = await import('./harness/seed');
  const { EVENT_TYPES } = await import('../lib/outbox');
  let person = 0;
  const tenant = async (name: string, projects: number, url: string): Promise<Tenant> => {
    const ws = await createWorkspace({ name, plan: 'BUSINESS' });
    // Caps high enough never to refuse a generation.
    await db()('workspaces').where({ id: ws.id }).update({ daily_spend_cap_cents: 1_000_000_000, weekly_ai_budget_cents: 1_000_000_000 });
    const projectIds: string[] = [];
    for (let i = 0; i < projects; i++) {
      const n = person++;
      const { project } = await connectedPersonalProject(simulator.control, ws.id, {
        personId: `fair${n}`,
        name: `Fair Person ${n}`,
        vanityName: `fair-${n}`,
      });
      projectIds.push(project.id as string);
    }
    const key = (await issueApiKey({ workspaceId: ws.id, scopes: ['read', 'write'], name: 'fairness bench' })).key as string;
    const endpoint = await webhookEndpoint(ws.id, url, EVENT_TYPES);
    return { workspaceId: ws.id, key, projectIds, endpointId: endpoint.id };
  };
  const noisy = await tenant('Noisy Co', NOISY_PROJECTS, receivers.slowUrl);
  const quiet: Tenant[] = [];
  for (let i = 0; i < QUIET; i++) quiet.push(await tenant(`Quiet ${i + 1}`, 1, receivers.healthyUrl));
  step(
    `workspaces: 1 noisy (${NOISY_PROJECTS} connected accounts, endpoint slow and failing) and ${QUIET} quiet (1 account, healthy endpoint each)`,
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

  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  cleanups.push(async () => agent.destroy());
  // A port found free at the start may have been taken by another process before the API bound
  // it (a shared machine): make sure the one listening is ours (it stamps every answer).
  const probe = await requestText(agent, new URL(`http://127.0.0.1:${apiPort}/v1/posts`), 'GET', {});
  if (typeof probe.headers['x-request-id'] !== 'string')
    throw new Error(`port ${apiPort} is answered by another process (${probe.status} ${probe.body.slice(0, 80)}); run again`);
  const ctx: Ctx = {
    apiUrl: `http://127.0.0.1:${apiPort}`,
    agent,
    db: db(),
    noisy,
    quiet,
    sizes,
    receivers,
    createdPerS: 10,
    log: (line) => console.log(`  ${line}`),
  };
  await warmUp(ctx);
  return ctx;
}

/** One item down every path (the worker's bundle, connections, JIT) before any clock starts. */
async function warmUp(ctx: Ctx): Promise<void> {
  const t0 = Date.now();
  const saved = { ...ctx.sizes };
  Object.assign(ctx.sizes, { quietPosts: 1, quietEvents: 1, leadS: 5, timeoutS: 180 });
  const quiet = ctx.quiet;
  ctx.quiet = quiet.slice(0, 1);
  try {
    for (const [name, phase] of Object.entries(SCENARIOS)) {
      const r = await phase(ctx, false);
      if (r.unfinished) throw new Error(`warm-up: the ${name} item was not done within 180 s (is the worker up?)`);
    }
  } finally {
    Object.assign(ctx.sizes, saved);
    ctx.quiet = quiet;
    // One post is no measure of the creation rate (bench/fairness/scenarios.ts publishingPhase).
    ctx.createdPerS = 10;
  }
  await sleep(1000);
  step(`warm-up: one post, one generation and one webhook through the service in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

await main();
