// Bench: what the operability additions cost on GET /v1/posts?limit=50 (issue 17), in one run.
//
//   npm run bench -- operability [--requests 3000] [--rounds 3]
//
// The real app in this process answers a 50-post page over real HTTP (sequential keep-alive
// requests, so each figure is one request's latency). Per round it measures, interleaved:
//   plain      — the request as served (metrics on: they cannot be switched off);
//   validated  — the same plus the test suite's response check (test/support/contract.ts);
//   traced     — tracing on (lib/telemetry.ts: the request span, the Postgres and Redis
//                instrumentations), spans batched to an exporter that drops them, so the
//                figure is the cost in this process and not a collector's network;
//   untraced   — tracing off again, as a process without OTEL_* variables runs: the app built
//                without the request span, no instrumentation registered (what "off" costs
//                is the difference to plain, which is the same code path);
// and, in the same process, the cost of the metrics calls one request makes (a counter inc and
// a histogram observe with its labels), timed in a tight loop and expressed against the mean
// request. The pieces that are switchable are measured on vs off; the metrics as their calls.

import { parseArgs } from 'node:util';
import type { AddressInfo } from 'node:net';
import { recreateDatabase, flushRedis } from './harness/database';

const { values: opt } = parseArgs({ options: { requests: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' } } });
const REQUESTS = Number(opt.requests);
const ROUNDS = Number(opt.rounds);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_ops';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';
Object.assign(process.env, {
  DATABASE_URL,
  REDIS_URL,
  RATE_LIMIT_READ: '10000000',
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  CONTRACT_CHECK: 'strict',
});

await recreateDatabase(DATABASE_URL);
await flushRedis(REDIS_URL);
const { db, migrateLatest, closeDb } = await import('../lib/db');
await migrateLatest(db());
const { workspaceWithKey } = await import('../test/support/factories');
const { createApp } = await import('../api/app');
const { listen } = await import('../api/listen');
const { checkResponse } = await import('../test/support/contract');
const { httpDuration, httpRequests } = await import('../lib/metrics');
const { closeRedis } = await import('../lib/redis');
const { startTracing, stopTracing } = await import('../lib/telemetry');
const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
const { tracingMiddleware } = await import('../api/tracing');
const { apiClient } = await import('../client');

const ws = await workspaceWithKey();
for (let i = 0; i < 60; i++) {
  const res = await db()('posts')
    .insert({
      id: `post_bench${String(i).padStart(6, '0')}`,
      workspace_id: ws.workspace.id,
      project_id: ws.project.id,
      status: 'draft',
      title: `Post ${i}`,
      content: 'A post of ordinary length, with a couple of sentences. '.repeat(8),
      content_type: 'PERSONAL',
      created_at: new Date(Date.now() - i * 60_000),
    })
    .catch((e: Error) => e);
  if (res instanceof Error) throw res;
}
async function serve(app: ReturnType<typeof createApp>) {
  const s = await listen(app, { door: 'rest', port: 0, host: '127.0.0.1' });
  return { server: s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1/posts?projectId=${ws.project.id}&limit=50` };
}
const { server, url } = await serve(createApp());
// The traced app: the same app with the request span mounted first (createApp does this when
// tracing is on at its start); tracing itself is switched on and off around its rounds.
const tracedApp = createApp();
tracedApp.middleware.unshift(tracingMiddleware('rest'));
const traced = await serve(tracedApp);
const discard = {
  export: (_spans: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }),
  shutdown: async () => {},
};
const headers = { Authorization: `Bearer ${ws.key}` };

// CPU time of this process (the server and the client both run here) per request, beside the
// wall time: on a shared machine the wall time swings with other load, the CPU spent per
// request much less, so the tracing figures below are read from it.
const cpu: Record<'plain' | 'traced' | 'untraced', number[]> = { plain: [], traced: [], untraced: [] };
async function run(validate: boolean, target = url, cpuInto?: number[]): Promise<number> {
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const res = await fetch(target, { headers });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    if (validate) {
      const problems = checkResponse('GET', url, res.status, res.headers.get('content-type'), body);
      if (problems.length) throw new Error(problems.join('; '));
    }
  }
  const used = process.cpuUsage(cpuStart);
  cpuInto?.push((used.user + used.system) / 1000 / REQUESTS);
  return (performance.now() - started) / REQUESTS;
}

await run(true); // warm-up (also compiles the contract validators)
await startTracing({ serviceName: 'bench', spanProcessor: new BatchSpanProcessor(discard as never) });
await run(false, traced.url); // warm-up of the traced path
await stopTracing();
const plain: number[] = [];
const validated: number[] = [];
const tracedRuns: number[] = [];
const untraced: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  plain.push(await run(false, url, cpu.plain));
  validated.push(await run(true));
  await startTracing({ serviceName: 'bench', spanProcessor: new BatchSpanProcessor(discard as never) });
  tracedRuns.push(await run(false, traced.url, cpu.traced));
  await stopTracing();
  untraced.push(await run(false, url, cpu.untraced));
}
const labels = { operation: 'posts.list', method: 'GET', status: '200' };
const N = 200_000;
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  httpRequests.inc(labels);
  httpDuration.observe(labels, 0.004);
}
const metricsMs = (performance.now() - t0) / N;
// The page the validation is timed on, fetched with the typed client (client/, generated from
// the OpenAPI document), as a caller of the API would.
const typed = apiClient(new URL(url).origin, ws.key);
const { data: sampleBody, error: sampleError } = await typed.GET('/v1/posts', {
  params: { query: { projectId: ws.project.id, limit: 50 } },
});
if (!sampleBody || sampleBody.data.length !== 50) throw new Error(`typed client: ${JSON.stringify(sampleError)}`);
const M = 5_000;
const t1 = performance.now();
for (let i = 0; i < M; i++) checkResponse('GET', url, 200, 'application/json', sampleBody);
const validateMs = (performance.now() - t1) / M;
const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
const p = mean(plain);
const v = mean(validated);
const t = mean(tracedRuns);
const u = mean(untraced);
console.log(`GET /v1/posts?limit=50, ${REQUESTS} sequential requests x ${ROUNDS} rounds (interleaved)`);
console.log(
  `  plain (metrics on)            ${(p * 1000).toFixed(0)} µs/request  rounds: ${plain.map((x) => (x * 1000).toFixed(0)).join(', ')}`,
);
console.log(
  `  + response validation         ${(v * 1000).toFixed(0)} µs/request  rounds: ${validated.map((x) => (x * 1000).toFixed(0)).join(', ')}  (+${(((v - p) / p) * 100).toFixed(1)} %)`,
);
console.log(
  `  + tracing on                  ${(t * 1000).toFixed(0)} µs/request  rounds: ${tracedRuns.map((x) => (x * 1000).toFixed(0)).join(', ')}  (+${(((t - p) / p) * 100).toFixed(1)} %)`,
);
console.log(
  `  tracing off (after it ran)    ${(u * 1000).toFixed(0)} µs/request  rounds: ${untraced.map((x) => (x * 1000).toFixed(0)).join(', ')}  (${u >= p ? '+' : ''}${(((u - p) / p) * 100).toFixed(1)} %)`,
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
console.log(`  metrics calls of one request  ${(metricsMs * 1000).toFixed(2)} µs  (${((metricsMs / p) * 100).toFixed(2)} % of a request)`);
server.close();
traced.server.close();
await closeDb();
await closeRedis();
process.exit(0);
