import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import { config } from './config';
import { CONNECTION_HEALTH } from './temporal/contracts/connectionHealth';
import { WEBHOOK_DELIVERY, WEBHOOK_ENDPOINT, WEBHOOK_RELAY } from './temporal/contracts/deliverWebhook';
import { ENGAGE_POST } from './temporal/contracts/engagePost';
import { jobWorkflowId } from './temporal/contracts/jobs';
import { MAINTENANCE } from './temporal/contracts/maintenance';
import { PUBLISH_POST } from './temporal/contracts/publishPost';
import { REVIEW_POST } from './temporal/contracts/reviewPost';
import { tracingActive } from './telemetry';

// The Temporal connection shared by the API and the worker. What is started, signalled and
// queried is named by the contracts (lib/temporal/contracts/) and started by the starters
// (lib/temporal/start/), one per workflow (CONVENTIONS.md habit 14).

/** Declared once in lib/searchAttributes.ts (a pure module the dev server flags derive from). */
export { SEARCH } from './searchAttributes';

/**
 * Workflow ids come from business ids, so an operator finds a post's workflow by its API id. Each
 * is built by its workflow's contract (lib/temporal/contracts/); this is their index for operator
 * code and tests.
 */
export const workflowIds = {
  publish: PUBLISH_POST.id,
  connectionHealth: CONNECTION_HEALTH.id,
  maintenance: MAINTENANCE.id,
  generation: jobWorkflowId,
  webhookDelivery: WEBHOOK_DELIVERY.id,
  webhookEndpoint: WEBHOOK_ENDPOINT.id,
  webhookRelay: WEBHOOK_RELAY.id,
  review: REVIEW_POST.id,
  engagement: ENGAGE_POST.id,
};

let shared: Promise<Client> | undefined;

export function temporalAddress(): string {
  return config.temporalAddress ?? '127.0.0.1:7233';
}

export function temporalClient(): Promise<Client> {
  if (!shared) {
    shared = Connection.connect({ address: temporalAddress() }).then(
      (connection) => new Client({ connection, namespace: config.temporalNamespace, interceptors: clientInterceptors() }),
    );
    shared.catch(() => {
      shared = undefined;
    });
  }
  return shared;
}

/**
 * With tracing on (lib/telemetry.ts), every start, signal and query carries the caller's trace
 * context in its Temporal headers, where the workflow and activity interceptors pick it up.
 */
export function clientInterceptors(): { workflow: OpenTelemetryWorkflowClientInterceptor[] } | undefined {
  return tracingActive() ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}

export async function closeTemporalClient(): Promise<void> {
  if (!shared) return;
  const c = await shared.catch(() => undefined);
  shared = undefined;
  await c?.connection.close();
}
