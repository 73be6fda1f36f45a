import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import { config, serviceAddresses } from '../config';
import { searchAttributeIndexedTypes } from '../searchAttributes';
import { CONNECTION_HEALTH } from './contracts/connectionHealth';
import { WEBHOOK_DELIVERY, WEBHOOK_ENDPOINT, WEBHOOK_RELAY } from './contracts/deliverWebhook';
import { ENGAGE_POST } from './contracts/engagePost';
import { jobWorkflowId } from './contracts/jobs';
import { MAINTENANCE } from './contracts/maintenance';
import { PUBLISH_POST } from './contracts/publishPost';
import { REVIEW_POST } from './contracts/reviewPost';
import { tracingActive } from '../telemetry';

// The Temporal connection shared by the API and the worker. What is started, signalled and
// queried is named by the contracts (lib/temporal/contracts/) and started by the starters
// (lib/temporal/start/), one per workflow (CONVENTIONS.md habit 14).

/** Declared once in lib/searchAttributes.ts (a pure module the dev server flags derive from). */
export { SEARCH } from '../searchAttributes';

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

/** The slice of a connection (client or worker) that the search-attribute checks use. */
type OperatorConnection = { operatorService: Pick<Connection['operatorService'], 'listSearchAttributes' | 'addSearchAttributes'> };

/** The declared search attributes (lib/searchAttributes.ts) the namespace does not have. */
export async function missingSearchAttributes(connection: OperatorConnection, namespace = config.temporalNamespace): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  return Object.keys(searchAttributeIndexedTypes()).filter((name) => !(name in (existing.customAttributes ?? {})));
}

/**
 * Registers the declared search attributes the namespace lacks, through the operator service
 * (the path a production deploy uses: `npm run cluster`, the worker, `npm start` against an
 * external server). A refusal is thrown with the names and the fix: a workflow started without
 * them is refused by the server ("no mapping defined for search attribute"), so a process that
 * goes on without them only defers its posts to the reconciler (docs/operations.md).
 */
export async function registerSearchAttributes(connection: OperatorConnection, namespace = config.temporalNamespace): Promise<string[]> {
  const missing = await missingSearchAttributes(connection, namespace);
  if (!missing.length) return [];
  const wanted = searchAttributeIndexedTypes();
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, wanted[name]!])),
    });
  } catch (err) {
    throw new Error(
      `Temporal namespace "${namespace}" lacks the search attributes ${missing.join(', ')} and registering them failed ` +
        `(${(err as Error).message}); register them as an operator (docs/operations.md "Search attributes").`,
    );
  }
  return missing;
}

/** gRPC status NOT_FOUND (grpc/doc/statuscodes.md), as the frontend answers for an unknown namespace. */
const GRPC_NOT_FOUND = 5;

export type NamespaceCheck =
  | { state: 'ready' }
  | { state: 'missing-attributes'; names: string[] }
  | { state: 'no-namespace' }
  | { state: 'unreachable'; reason: string };

/**
 * Whether the namespace at TEMPORAL_ADDRESS can take the workflows the service starts: it exists
 * and has every declared search attribute. "unreachable" when the server does not answer within
 * `timeoutMs` (an outage, which the reconciler covers; a missing namespace or attribute is a
 * deploy step left out, which it does not).
 */
export async function checkNamespace(timeoutMs = 3_000): Promise<NamespaceCheck> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address: temporalAddress(), connectTimeout: timeoutMs });
  } catch (err) {
    return { state: 'unreachable', reason: (err as Error).message };
  }
  try {
    const names = await missingSearchAttributes(connection);
    return names.length ? { state: 'missing-attributes', names } : { state: 'ready' };
  } catch (err) {
    // gRPC NOT_FOUND: the server answered, and has no such namespace.
    if ((err as { code?: number }).code === GRPC_NOT_FOUND) return { state: 'no-namespace' };
    return { state: 'unreachable', reason: (err as Error).message };
  } finally {
    await connection.close().catch(() => undefined);
  }
}
