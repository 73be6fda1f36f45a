import { createRequire } from 'node:module';
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import type { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

// OpenTelemetry traces (docs/operations.md "Traces"). Off unless the standard OTEL_* variables
// ask for them: then each process (API, worker) registers one tracer provider exporting by OTLP
// over HTTP, the Postgres (pg), Redis (ioredis), outbound fetch (undici: network, LLM, image
// calls) and node:http (webhook deliveries) instrumentations, and the callers add their own
// spans: the Koa request (api/tracing.ts) and the Temporal client, workflow and activity
// interceptors (lib/temporal/client.ts, workers/worker.ts). Off, nothing is registered and nothing is
// wrapped, and the SDK is not even loaded: the OpenTelemetry API's no-op tracer is all that is left.

export interface TracingEnv {
  OTEL_SDK_DISABLED?: string;
  OTEL_TRACES_EXPORTER?: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
}

/**
 * Whether the environment asks for traces: an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp; OTEL_SDK_DISABLED=true and
 * OTEL_TRACES_EXPORTER=none always win. Only the OTLP exporter is offered.
 */
export function tracingRequested(env: TracingEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (exporters.includes('none')) return false;
  if (exporters.length && !exporters.includes('otlp')) {
    throw new Error(`OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER}: only "otlp" (or "none") is supported`);
  }
  return exporters.includes('otlp') || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

interface ActiveTracing {
  provider: NodeTracerProvider;
  resource: Resource;
  spanProcessor: SpanProcessor;
  disable: () => void;
}

let active: ActiveTracing | undefined;

/** True once startTracing ran in this process (and until stopTracing). */
export function tracingActive(): boolean {
  return active !== undefined;
}

/** The span processor and resource the worker hands to the workflow span sink. */
export function tracingPipeline(): { spanProcessor: SpanProcessor; resource: Resource } | undefined {
  return active && { spanProcessor: active.spanProcessor, resource: active.resource };
}

/** The project's tracer (a no-op tracer while tracing is off). */
export function tracer(): Tracer {
  return trace.getTracer('content-scheduler');
}

/**
 * Starts tracing in this process. `spanProcessor` replaces the OTLP exporter (the tests pass an
 * in-memory one); otherwise spans are batched to the OTLP/HTTP endpoint the OTEL_* variables name.
 */
export async function startTracing(opts: { serviceName: string; spanProcessor?: SpanProcessor }): Promise<void> {
  if (active) return;
  const [
    { OTLPTraceExporter },
    { registerInstrumentations },
    { HttpInstrumentation },
    { IORedisInstrumentation },
    { PgInstrumentation },
    { UndiciInstrumentation },
    { Resource },
    { BatchSpanProcessor },
    { NodeTracerProvider },
  ] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-trace-node'),
  ]);
  if (active) return;
  const resource = new Resource({
    'service.name': process.env.OTEL_SERVICE_NAME || opts.serviceName,
    'service.namespace': 'content-scheduler',
  });
  const spanProcessor = opts.spanProcessor ?? new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The global provider, the AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  const redisInstrumentation = new IORedisInstrumentation({ requireParentSpan: true });
  const instrumentations: Instrumentation[] = [
    new PgInstrumentation({ requireParentSpan: true }),
    redisInstrumentation,
    new UndiciInstrumentation({ requireParentforSpans: true }),
    // Outbound node:http only (webhook deliveries); the inbound request is the Koa span.
    new HttpInstrumentation({ ignoreIncomingRequestHook: () => true, requireParentforOutgoingSpans: true }),
  ];
  const unregister = registerInstrumentations({ tracerProvider: provider, instrumentations });
  // The instrumentations patch a module when it is required. The application imports pg and
  // ioredis as ES modules (knex requires pg lazily), so require them once here: the patches go
  // on the shared prototypes (pg's Client.query, ioredis's sendCommand), which every instance,
  // earlier or later, uses.
  const require = createRequire(import.meta.url);
  require('pg');
  const unpatchRedis = patchRedis(redisInstrumentation, require('ioredis'));
  active = {
    provider,
    resource,
    spanProcessor,
    disable: () => {
      unpatchRedis();
      unregister();
    },
  };
}

/**
 * The ioredis instrumentation's own patch (spans around Redis.prototype.sendCommand) applied to
 * the ioredis this service runs: its version check stops at ioredis 5, whose sendCommand and
 * connect are unchanged in 6, and its releases that accept 6 require Node 22.
 */
function patchRedis(instrumentation: IORedisInstrumentation, ioredis: unknown): () => void {
  const definition = (
    instrumentation as unknown as {
      getModuleDefinitions(): { patch?: (m: unknown, v?: string) => unknown; unpatch?: (m: unknown) => void }[];
    }
  ).getModuleDefinitions()[0];
  if (!definition?.patch) return () => {};
  definition.patch(ioredis, '5.99.0');
  return () => definition.unpatch?.(ioredis);
}

/** Flushes and stops tracing (process shutdown; the tests' after hooks). */
export async function stopTracing(): Promise<void> {
  if (!active) return;
  const current = active;
  active = undefined;
  current.disable();
  await current.provider.shutdown().catch(() => undefined);
  trace.disable();
  context.disable();
  propagation.disable();
}

/** Starts tracing when the OTEL_* variables ask for it (the API and worker entry points). */
export async function startTracingFromEnv(serviceName: string): Promise<boolean> {
  if (!tracingRequested()) return false;
  await startTracing({ serviceName });
  return true;
}
