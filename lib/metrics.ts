import { createServer, type Server } from 'node:http';
import client from 'prom-client';
import { log } from './logger';

// Prometheus metrics (issue 17; docs/operations.md "Metrics"). One registry per process; the
// API and the worker each expose it at /metrics on a port of its own (METRICS_PORT,
// WORKER_METRICS_PORT), never on the public API port. Label values are bounded sets
// (operation names, statuses, outcomes), never ids.

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

export const httpRequests = new client.Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by operation (the route name, or the path pattern outside the operation table) and status.',
  labelNames: ['operation', 'method', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from the request to the end of the answer, by operation and status.',
  labelNames: ['operation', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const rateLimitRefusals = new client.Counter({
  name: 'rate_limit_refusals_total',
  help: 'Requests refused with 429 rate_limited, by bucket (read, write, unauthenticated).',
  labelNames: ['bucket'] as const,
  registers: [registry],
});

export const rateLimitUnavailable = new client.Counter({
  name: 'rate_limit_unavailable_total',
  help: "Requests admitted uncounted because the rate limiter's Redis was unreachable (fail open), by bucket.",
  labelNames: ['bucket'] as const,
  registers: [registry],
});

export const idempotentReplays = new client.Counter({
  name: 'idempotent_replays_total',
  help: 'Writes answered from a stored Idempotency-Key record (spec 8), by operation.',
  labelNames: ['operation'] as const,
  registers: [registry],
});

export const publishOutcomes = new client.Counter({
  name: 'publish_attempts_total',
  help: 'Publish activity attempts by outcome: published, transient (retried), failed, stale (rescheduled or deleted meanwhile).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const publishLag = new client.Histogram({
  name: 'publish_lag_seconds',
  help: "Seconds between a post's scheduled time and its publication (includes the configured publish delay).",
  buckets: [1, 5, 15, 30, 60, 120, 180, 300, 600, 1800, 3600],
  registers: [registry],
});

export const webhookDeliveries = new client.Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome: delivered, retry (will be retried), failed (permanent).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const jobDuration = new client.Histogram({
  name: 'job_duration_seconds',
  help: "Seconds from a job's creation to its final state, by type and final status.",
  labelNames: ['type', 'status'] as const,
  buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
  registers: [registry],
});

/** The Postgres pool of this process (lib/db.ts), sampled at each scrape. */
export function observeDbPool(pool: () => { used: number; free: number; pending: number; max: number } | undefined): void {
  registry.removeSingleMetric('db_pool_connections');
  new client.Gauge({
    name: 'db_pool_connections',
    help: 'Postgres pool connections of this process by state (used, free, pending acquires, max).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const p = pool();
      if (!p) return;
      for (const [state, n] of Object.entries(p)) this.set({ state }, n);
    },
  });
}

/** The pool of a knex instance (tarn), for observeDbPool. */
export function knexPool(k: { client: { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number } } }) {
  const p = k.client.pool;
  return p ? { used: p.numUsed(), free: p.numFree(), pending: p.numPendingAcquires(), max: p.max } : undefined;
}

/**
 * Starts /metrics for a process; a port already taken is logged and the process runs on
 * without metrics (metrics must never take the API or the worker down).
 */
export async function serveMetrics(port: number, role: string): Promise<Server | undefined> {
  try {
    return await startMetricsServer(port);
  } catch (err) {
    log.error('metrics listener failed; this process exposes no metrics', { role, port, err });
    return undefined;
  }
}

/** GET /metrics on its own port; resolves with the server once it listens. */
export function startMetricsServer(port: number, host = '0.0.0.0'): Promise<Server> {
  const server = createServer(async (req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(body);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      log.info('metrics listening', { port: (server.address() as { port: number }).port });
      resolve(server);
    });
  });
}
