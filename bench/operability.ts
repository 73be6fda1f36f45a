// Bench: what response validation, tracing and metrics cost on GET /v1/posts?limit=50 (issue 17):
// the real app in this process, sequential keep-alive requests, the measurements interleaved
// per round (bench/README.md, "operability").

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
setBenchEnvironment(DATABASE_URL, REDIS_URL, { LOG_LEVEL: 'warn', CONTRACT_CHECK: 'strict' });
await resetStores(DATABASE_URL, REDIS_URL);
const { db } = await import('../lib/db');
const { benchWorkspace } = await import('./harness/seed');
const { createApp } = await import('../api/app');
const { listen } = await import('../api/listen');
const { tracingMiddleware } = await import('../api/tracing');
const { startTracing, stopTracing } = await import('../lib/telemetry');
const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
const { checkResponse } = await import('../tooling/responseContract');
const { httpDuration, httpRequests } = await import('../lib/metrics');
const { apiClient } = await import('../client');

// A workspace with 60 posts in one project, the app served plain and with the request span.
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
  const server = (await listen(app, { door: 'rest', port: 0, host: '127.0.0.1' })) as Server;
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/posts?projectId=${project.id}&limit=50` };
};
// The traced app: the same app with the request span mounted first (createApp does this when
// tracing is on at its start); tracing itself is switched on and off around its rounds.
const tracedApp = createApp();
tracedApp.middleware.unshift(tracingMiddleware('rest'));
const [plain, traced] = [await serve(createApp()), await serve(tracedApp)];

/** Tracing on, its spans batched to an exporter that drops them. */
async function withTracing<T>(f: () => Promise<T>): Promise<T> {
  const discard = { export: (_spans: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: async () => {} };
  await startTracing({ serviceName: 'bench', spanProcessor: new BatchSpanProcessor(discard as never) });
  try {
    return await f();
  } finally {
    await stopTracing();
  }
}

// CPU time of this process (the server and the client both run here) per request, beside the
// wall time: on a shared machine the wall time swings with other load, the CPU spent per
// request much less, so the tracing figures below are read from it.
const cpu: Record<'plain' | 'traced' | 'untraced', number[]> = { plain: [], traced: [], untraced: [] };
const requests = async (validate: boolean, target = plain.url, cpuInto?: number[]): Promise<number> => {
  const [started, cpuStart] = [performance.now(), process.cpuUsage()];
  for (let i = 0; i < opt.requests; i++) {
    const res = await fetch(target, { headers: { Authorization: `Bearer ${key}` } });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    const problems = validate ? checkResponse('GET', plain.url, res.status, res.headers.get('content-type'), body) : [];
    if (problems.length) throw new Error(problems.join('; '));
  }
  const used = process.cpuUsage(cpuStart);
  cpuInto?.push((used.user + used.system) / 1000 / opt.requests);
  return (performance.now() - started) / opt.requests;
};
/** Milliseconds per call of f, over n calls in a tight loop. */
const perCall = (n: number, f: () => void) => {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f();
  return (performance.now() - t0) / n;
};

await requests(true); // warm-up (also compiles the contract validators)
await withTracing(() => requests(false, traced.url)); // warm-up of the traced path
const rounds: Record<'plain' | 'validated' | 'traced' | 'untraced', number[]> = { plain: [], validated: [], traced: [], untraced: [] };
for (let r = 0; r < opt.rounds; r++) {
  rounds.plain.push(await requests(false, plain.url, cpu.plain));
  rounds.validated.push(await requests(true));
  rounds.traced.push(await withTracing(() => requests(false, traced.url, cpu.traced)));
  rounds.untraced.push(await requests(false, plain.url, cpu.untraced));
}
// The metrics calls one request makes, and (on a page fetched with the typed client, client/,
// as a caller of the API would) the response check, each in a tight loop.
const labels = { operation: 'posts.list', method: 'GET', status: '200' };
const metricsMs = perCall(200_000, () => {
  httpRequests.inc(labels);
  httpDuration.observe(labels, 0.004);
});
const page = await apiClient(new URL(plain.url).origin, key).GET('/v1/posts', { params: { query: { projectId: project.id, limit: 50 } } });
if (!page.data || page.data.data.length !== 50) throw new Error(`typed client: ${JSON.stringify(page.error)}`);
const validateMs = perCall(5_000, () => checkResponse('GET', plain.url, 200, 'application/json', page.data));

const us = (x: number) => (x * 1000).toFixed(0);
const share = (x: number, of: number, digits = 1) => ((x / of) * 100).toFixed(digits);
/** x against base in %, signed. */
const change = (x: number, base: number) => `${x >= base ? '+' : ''}${share(x - base, base)} %`;
const row = (label: string, xs: number[], vs?: string) =>
  `  ${label.padEnd(30)}${us(mean(xs))} µs/request  rounds: ${xs.map(us).join(', ')}${vs ? `  (${vs})` : ''}`;
const [p, v, t, u] = [rounds.plain, rounds.validated, rounds.traced, rounds.untraced].map(mean) as [number, number, number, number];
const [cp, ct, cu] = [cpu.plain, cpu.traced, cpu.untraced].map(mean) as [number, number, number];
console.log(`GET /v1/posts?limit=50, ${opt.requests} sequential requests x ${opt.rounds} rounds (interleaved)`);
console.log(row('plain (metrics on)', rounds.plain));
console.log(row('+ response validation', rounds.validated, change(v, p)));
console.log(row('+ tracing on', rounds.traced, change(t, p)));
console.log(row('tracing off (after it ran)', rounds.untraced, change(u, p)));
console.log(`  validation of one 50-post page ${us(validateMs)} µs  (${share(validateMs, p)} % of a request; test side only)`);
console.log(
  `  CPU per request: plain ${us(cp)} µs, tracing on ${us(ct)} µs (${change(ct, cp)}), tracing off after it ran ${us(cu)} µs (${change(cu, cp)})`,
);
console.log(`  metrics calls of one request  ${(metricsMs * 1000).toFixed(2)} µs  (${share(metricsMs, p, 2)} % of a request)`);
plain.server.close();
traced.server.close();
await closeStores();
process.exit(0);
