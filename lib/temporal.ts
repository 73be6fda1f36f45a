import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import { config, serviceAddresses } from './config';
import { tracingActive } from './telemetry';

// The Temporal side shared by the API (starts, signals, queries) and the worker.

/** Declared once in lib/searchAttributes.ts (a pure module the dev server flags derive from). */
export { SEARCH } from './searchAttributes';

/** Workflow ids come from business ids, so an operator finds a post's workflow by its API id. */
export const workflowIds = {
  publish: (postId: string) => `publish-${postId}`,
  connectionHealth: (projectId: string) => `connection-health-${projectId}`,
  maintenance: () => 'maintenance-reconciler',
  /** ARCHITECTURE.md: one workflow per job, id = job id, so the API id finds it in the UI. */
  generation: (jobId: string) => jobId,
  /** One per (event, endpoint): a second start for the pair is rejected, so each is delivered once. */
  webhookDelivery: (eventId: string, endpointId: string) => `webhook-${eventId}-${endpointId}`,
  /** docs/webhooks.md: the one delivery workflow of an endpoint (replaces one per pair for new events). */
  webhookEndpoint: (endpointId: string) => `webhook-endpoint-${endpointId}`,
  webhookRelay: () => 'webhook-outbox-relay',
  /** docs/review.md: one workflow per review round of a post. */
  review: (postId: string, round: number) => `review-${postId}-${round}`,
  /** docs/engagement.md: the engagement after a post's publish (a child of publish-<postId>). */
  engagement: (postId: string) => `engage-${postId}`,
};

let shared: Promise<Client> | undefined;

export function temporalAddress(): string {
  return serviceAddresses().temporal.address;
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
