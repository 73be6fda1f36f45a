import v8 from 'node:v8';
import { config } from '../lib/config';
import { closeDb, db, migrateLatest } from '../lib/db';
import { log } from '../lib/logger';
import { knexPool, observeDbPool, serveMetrics } from '../lib/metrics';
import { preflightOrExit } from '../lib/preflight';
import { closeRedis } from '../lib/redis';
import { closeTemporalClient, temporalAddress, temporalClient } from '../lib/temporal/client';
import { ensureMaintenanceWorkflow } from '../lib/temporal/start/maintenance';
import { ensureMetricsSync } from '../lib/temporal/start/metricsSync';
import { ensureKnowledgeResyncSchedule } from '../lib/temporal/start/resyncKnowledge';
import { ensureUploadSweepSchedule } from '../lib/temporal/start/sweepUploads';
import { ensureWebhookRelay } from '../lib/temporal/start/webhookRelay';
import { startTracingFromEnv, stopTracing } from '../lib/telemetry';
import { createWorker, prebuiltBundlePath } from './worker';

// The worker process: every workflow and activity on one task queue. Any number may run.
async function main() {
  // OpenTelemetry traces when the OTEL_* variables ask for them (lib/telemetry.ts), before the
  // worker and its clients are built: they pick their interceptors and bundle from it.
  const tracing = await startTracingFromEnv('content-scheduler-worker');
  await preflightOrExit({ databaseUrl: config.databaseUrl, redisUrl: config.redisUrl });
  await migrateLatest(db());
  const { worker, connection } = await createWorker();
  // The reconciler and the outbox relay: one each for the deployment; the first worker starts them.
  await ensureMaintenanceWorkflow(await temporalClient());
  await ensureWebhookRelay(await temporalClient());
  // Post analytics: one metrics-sync workflow for the deployment (docs/analytics.md).
  await ensureMetricsSync(await temporalClient());
  // Upload expiry (docs/media.md): a Temporal Schedule, created once.
  await ensureUploadSweepSchedule(await temporalClient());
  await ensureKnowledgeResyncSchedule(await temporalClient());
  // Prometheus /metrics on WORKER_METRICS_PORT (lib/metrics.ts, docs/operations.md).
  observeDbPool(() => knexPool(db() as never));
  const metricsServer = await serveMetrics(config.workerMetricsPort, 'worker');
  const stop = () => {
    log.info('worker stopping');
    worker.shutdown();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const heapLimitMiB = Math.round(v8.getHeapStatistics().heap_size_limit / 1024 ** 2);
  log.info('worker running', {
    taskQueue: config.temporalTaskQueue,
    temporal: temporalAddress(),
    workflowBundle: prebuiltBundlePath() ?? 'bundled from source at start',
    heapLimitMiB,
    tracing,
  });
  // The heap limit can only be set when Node starts (`npm run start:worker` passes it); a worker
  // started some other way keeps Node's, which it grows towards in a burst (docs/publishing.md).
  if (config.worker.heapMiB > 0 && heapLimitMiB > config.worker.heapMiB * 1.25)
    log.warn('worker heap limit is not WORKER_HEAP_MIB; start the worker with `npm run start:worker` or node --max-old-space-size', {
      heapLimitMiB,
      workerHeapMiB: config.worker.heapMiB,
    });
  await worker.run();
  metricsServer?.close();
  await connection.close();
  await closeTemporalClient();
  await Promise.allSettled([closeDb(), closeRedis(), stopTracing()]);
  process.exit(0);
}

main().catch((err) => {
  log.error('worker failed', { err });
  process.exit(1);
});
