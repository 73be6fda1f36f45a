import { API_NODE_ARGS } from '../lib/apiRuntime';
import { config } from '../lib/config';
import { closeDb, db, migrateLatest } from '../lib/db';
import { log } from '../lib/logger';
import { knexPool, observeDbPool, serveMetrics } from '../lib/metrics';
import { preflightOrExit } from '../lib/preflight';
import { closeRedis } from '../lib/redis';
import { createApp } from './app';
import { createApiDeps } from './deps';
import { listen } from './listen';
import { closeAuthSubscriber } from './auth/apiKeys';
import { closeOAuthSubscriber } from './oauth/tokens';
import { closeMcp, createMcpApp } from './mcp/app';
import { startTracingFromEnv, stopTracing } from '../lib/telemetry';
import { checkNamespace, temporalAddress } from '../lib/temporal/client';

// The API process: REST + OAuth origin on PORT, the MCP transport ({mcp_url}, spec 4.9) on
// MCP_PORT. Migrates on start so a fresh database works.
async function main() {
  // OpenTelemetry traces when the OTEL_* variables ask for them (lib/telemetry.ts), before any client is built.
  if (await startTracingFromEnv('content-scheduler-api')) log.info('tracing on (OTLP)');
  const missing = API_NODE_ARGS.filter((arg) => !process.execArgv.includes(arg));
  if (missing.length)
    log.warn('api started without its Node options (lib/apiRuntime.ts); start it with `npm run start:api` or pass them', { missing });
  await preflightOrExit({ databaseUrl: config.databaseUrl, redisUrl: config.redisUrl });
  // Every post the API schedules starts its publish workflow with the search attributes
  // (lib/temporal/start/publishPost.ts); a server without them refuses each start, and the posts would
  // wait for the reconciler. The namespace is set up before any API starts (docs/operations.md
  // "Search attributes"), so a missing one stops the API here, by name. An unreachable Temporal
  // does not: that is an outage the reconciler covers.
  const namespace = await checkNamespace();
  if (namespace.state === 'unreachable')
    log.warn('Temporal not reachable at start; publish workflows wait for the reconciler until it is', {
      temporal: temporalAddress(),
      reason: namespace.reason,
    });
  else if (namespace.state !== 'ready') {
    log.error(
      `Temporal at ${temporalAddress()}: ` +
        (namespace.state === 'no-namespace'
          ? `there is no namespace "${config.temporalNamespace}"`
          : `namespace "${config.temporalNamespace}" lacks the search attributes ${namespace.names.join(', ')}`) +
        '; set the namespace up before starting the API (npm run cluster and every worker do; docs/operations.md "Search attributes")',
    );
    process.exit(1);
  }
  const applied = await migrateLatest(db());
  if (applied.length) log.info('migrations applied', { applied });
  // One set of outside-world clients for both origins.
  const deps = createApiDeps();
  // Both listeners are set up as every server of the API is (api/listen.ts): timeouts, the
  // request-head limit, and the door's error body for requests the HTTP parser refuses. Both are
  // listening before "api listening" is logged (the test harness waits for that line).
  const [server, mcpServer] = await Promise.all([
    listen(createApp(deps), { door: 'rest', port: config.port }),
    // A taken MCP_PORT must not take the REST API down with it (`npm start` checks the port
    // before starting; a second API process started without its own MCP_PORT does not).
    listen(createMcpApp(deps), { door: 'mcp', port: config.mcpPort }).catch((err: unknown) => {
      log.error('mcp listener failed; this process serves no agent transport', { port: config.mcpPort, err });
      return undefined;
    }),
  ]);
  log.info('api listening', { url: config.publicUrl, port: config.port });
  if (mcpServer) log.info('mcp listening', { url: config.mcpPublicUrl, port: config.mcpPort });
  // Prometheus /metrics on METRICS_PORT (lib/metrics.ts, docs/operations.md).
  observeDbPool(() => knexPool(db() as never));
  const metricsServer = await serveMetrics(config.metricsPort, 'api');

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info('api stopping');
    // Open MCP streams would hold the listener open: end the sessions first.
    await closeMcp();
    await Promise.all([
      new Promise<void>((resolve) => server.close(() => resolve())),
      new Promise<void>((resolve) => {
        if (!mcpServer) return resolve();
        mcpServer.closeAllConnections();
        mcpServer.close(() => resolve());
      }),
    ]);
    closeAuthSubscriber();
    closeOAuthSubscriber();
    metricsServer?.close();
    await Promise.allSettled([closeDb(), closeRedis(), stopTracing()]);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  log.error('api failed to start', { err });
  process.exit(1);
});
