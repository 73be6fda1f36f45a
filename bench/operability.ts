// Bench: what the operability additions cost on GET /v1/posts?limit=50 (issue 17), in one run.
//
// The real app in this process answers a 50-post page over real HTTP (sequential keep-alive
// requests, so each figure is one request's latency). Per round it measures, interleaved:
//   plain      — the request as served (metrics on: they cannot be switched off);
//   validated  — the same plus the test suite's response check (tooling/responseContract.ts);
//   traced     — tracing on (lib/telemetry.ts: the request span, the Postgres and Redis
//                instrumentations), spans batched to an exporter that drops them, so the
//                figure is the cost in this process and not a collector's network;
//   untraced   — tracing off again, as a process without OTEL_* variables runs: the app built
//                without the request span, no instrumentation registered (what "off" costs
//                is the difference to plain, which is the same code path);
// and, in the same process, the cost of the metrics calls one request makes (a counter inc and
// a histogram observe with its labels), timed in a tight loop and expressed against the mean
// request. The pieces that are switchable are measured on vs off; the metrics as their calls.

import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { closeStores, resetStores, setBenchEnvironment } from './harness/database';
import { benchFlags } from './harness/options';
import { mean } from './harness/format';

const opt = benchFlags(
  'operability: what response validation, tracing and metrics cost on GET /v1/posts?limit=50.',
  {
    requests: { default: 3000, min: 1, integer: true, help: 'sequential requests per measurement' },
    rounds: { default: 3, min: 1, integer: true, help: 'interleaved rounds of plain, validated, traced and untraced' },
  },
  `Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/content_scheduler_bench_ops),
             BENCH_REDIS_URL (default redis://127.0.0.1:6379/13; the database is flushed).`,
);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_ops';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';

type Bench = Awaited<ReturnType<typeof setUp>>;
type Figures = Awaited<ReturnType<typeof run>>;

/** The bench's stores, a workspace with 60 posts in one project, the app served plain and with the request span. */
async function setUp() {
  setBenchEnvironment(DATABASE_URL, REDIS_URL, { LOG_LEVEL: 'warn', CONTRACT_CHECK: 'strict' });
  await resetStores(DATABASE_URL, REDIS_URL);
  const { db } = await import('../lib/db');
  const { benchWorkspace } = await import('./harness/seed');
  const { createApp } = await import('../api/app');
  const { listen } = await import('../api/listen');
  const { tracingMiddleware } = await import('../api/tracing');

  const { workspace, project, key } = await benchWorkspace({
    name: 'Operability bench',
    project: { name: 'Bench person', connection: 'connected' },
    scopes: ['read', 'write'],
  });
  await db()('posts').insert(
    Array.from({ length: 60 }, (_, i) => ({
      id: `post_bench${String(i).padStart(6, '0')}`,
      workspace_id: workspace.id,
      project_id: project.id,
      status: 'draft',
      title: `Post ${i}`,
      content: 'A post of ordinary length, with a couple of sentences. '.repeat(8),
      content_type: 'PERSONAL',
      created_at: new Date(Date.now() - i * 60_000),
    })),
  );
  const serve = async (app: ReturnType<typeof createApp>) => {
    const s = await listen(app, { door: 'rest', port: 0, host: '127.0.0.1' });
    return { server: s as Server, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1/posts?projectId=${project.id}&limit=50` };
  };
  const plain = await serve(createApp());
  // The traced app: the same app with the request span mounted first (createApp does this when
  // tracing is on at its start); tracing itself is switched on and off around its rounds.
  const tracedApp = createApp();
  tracedApp.middleware.unshift(tracingMiddleware('rest'));
  const traced = await serve(tracedApp);
  return { projectId: project.id, key, plain, traced };
}

/** Tracing on, its spans batched to an exporter that drops them. */
async function withTracing<T>(f: () => Promise<T>): Promise<T> {
  const { startTracing, stopTracing } = await import('../lib/telemetry');
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const discard = {
    export: (_spans: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }),
    shutdown: async () => {},
  };
  await startTracing({ serviceName: 'bench', spanProcessor: new BatchSpanProcessor(discard as never) });
  try {
    return await f();
  } finally {
    await stopTracing();
  }
}

/** The interleaved rounds, then the metrics calls and the response check each timed alone. */
async function run(b: Bench) {
  const { checkResponse } = await import('../tooling/responseContract');
  const headers = { Authorization: `Bearer ${b.key}` };
  // CPU time of this process (the server and the client both run here) per request, beside the
  // wall time: on a shared machine the wall time swings with other load, the CPU spent per
  // request much less, so the tracing figures below are read from it.
  const cpu: Record<'plain' | 'traced' | 'untraced', number[]> = { plain: [], traced: [], untraced: [] };
  const requests = async (validate: boolean, target = b.plain.url, cpuInto?: number[]): Promise<number> => {
    const started = performance.now();
    const cpuStart = process.cpuUsage();
    for (let i = 0; i < opt.requests; i++) {
      const res = await fetch(target, { headers });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      if (validate) {
        const problems = checkResponse('GET', b.plain.url, res.status, res.headers.get('content-type'), body);
        if (problems.length) throw new Error(problems.join('; '));
      }
    }
    const used = process.cpuUsage(cpuStart);
    cpuInto?.push((used.user + used.system) / 1000 / opt.requests);
    return (performance.now() - started) / opt.requests;
  };

  await requests(true); // warm-up (also compiles the contract validators)
  await withTracing(() => requests(false, b.traced.url)); // warm-up of the traced path
  const rounds = { plain: [] as number[], validated: [] as number[], traced: [] as number[], untraced: [] as number[] };
  for (let r = 0; r < opt.rounds; r++) {
    rounds.plain.push(await requests(false, b.plain.url, cpu.plain));
    rounds.validated.push(await requests(true));
    rounds.traced.push(await withTracing(() => requests(false, b.traced.url, cpu.traced)));
    rounds.untraced.push(await requests(false, b.plain.url, cpu.untraced));
  }
  return { rounds, cpu, metricsMs: await timeMetricsCalls(), validateMs: await timeValidation(b) };
}

/** The metrics calls one request makes, in a tight loop: ms per request's worth. */
async function timeMetricsCalls(): Promise<number> {
  const { httpDuration, httpRequests } = await import('../lib/metrics');
  const labels = { operation: 'posts.list', method: 'GET', status: '200' };
  const N = 200_000;
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    httpRequests.inc(labels);
    httpDuration.observe(labels, 0.004);
  }
  return (performance.now() - t0) / N;
}

/**
 * The response check of one page, in a tight loop. The page is fetched with the typed client
 * (client/, generated from the OpenAPI document), as a caller of the API would.
 */
async function timeValidation(b: Bench): Promise<number> {
  const { checkResponse } = await import('../tooling/responseContract');
  const { apiClient } = await import('../client');
  const typed = apiClient(new URL(b.plain.url).origin, b.key);
  const { data: sampleBody, error: sampleError } = await typed.GET('/v1/posts', {
    params: { query: { projectId: b.projectId, limit: 50 } },
  });
  if (!sampleBody || sampleBody.data.length !== 50) throw new Error(`typed client: ${JSON.stringify(sampleError)}`);
  const M = 5_000;
  const t1 = performance.now();
  for (let i = 0; i < M; i++) checkResponse('GET', b.plain.url, 200, 'application/json', sampleBody);
  return (performance.now() - t1) / M;
}

function report({ rounds, cpu, metricsMs, validateMs }: Figures): void {
  const p = mean(rounds.plain);
  const v = mean(rounds.validated);
  const t = mean(rounds.traced);
  const u = mean(rounds.untraced);
  const us = (xs: number[]) => xs.map((x) => (x * 1000).toFixed(0)).join(', ');
  console.log(`GET /v1/posts?limit=50, ${opt.requests} sequential requests x ${opt.rounds} rounds (interleaved)`);
  console.log(`  plain (metrics on)            ${(p * 1000).toFixed(0)} µs/request  rounds: ${us(rounds.plain)}`);
  console.log(
    `  + response validation         ${(v * 1000).toFixed(0)} µs/request  rounds: ${us(rounds.validated)}  (+${(((v - p) / p) * 100).toFixed(1)} %)`,
  );
  console.log(
    `  + tracing on                  ${(t * 1000).toFixed(0)} µs/request  rounds: ${us(rounds.traced)}  (+${(((t - p) / p) * 100).toFixed(1)} %)`,
  );
  console.log(
    `  tracing off (after it ran)    ${(u * 1000).toFixed(0)} µs/request  rounds: ${us(rounds.untraced)}  (${u >= p ? '+' : ''}${(((u - p) / p) * 100).toFixed(1)} %)`,
  );
  console.log(
    `  validation of one 50-post page ${(validateMs * 1000).toFixed(0)} µs  (${((validateMs / p) * 100).toFixed(1)} % of a request; test side only)`,
  );
  const cp = mean(cpu.plain);
  const ct = mean(cpu.traced);
  const cu = mean(cpu.untraced);
  console.log(
    `  CPU per request: plain ${(cp * 1000).toFixed(0)} µs, tracing on ${(ct * 1000).toFixed(0)} µs (+${(((ct - cp) / cp) * 100).toFixed(1)} %), tracing off after it ran ${(cu * 1000).toFixed(0)} µs (${cu >= cp ? '+' : ''}${(((cu - cp) / cp) * 100).toFixed(1)} %)`,
  );
  console.log(
    `  metrics calls of one request  ${(metricsMs * 1000).toFixed(2)} µs  (${((metricsMs / p) * 100).toFixed(2)} % of a request)`,
  );
}

async function tearDown(b: Bench): Promise<void> {
  b.plain.server.close();
  b.traced.server.close();
  await closeStores();
}

const bench = await setUp();
report(await run(bench));
await tearDown(bench);
process.exit(0);
