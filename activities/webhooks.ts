import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { config } from '../lib/config';
import { systemResolver, type Resolver } from '../lib/webhooks/send';
import { createWebhookDeliveryActivities } from './webhookDelivery';
import { createWebhookHandoverActivities } from './webhookHandover';
import { createWebhookRelayActivities } from './webhookRelay';

// Outbound webhooks (spec 6, ARCHITECTURE.md "webhook delivery", docs/webhooks.md), in three
// parts that share these options: the outbox relay that turns committed events into delivery
// rows and wakes one delivery workflow per endpoint (./webhookRelay.ts), that workflow's delivery
// pass (./webhookDelivery.ts), and the hand-over of the per-delivery workflows that ran before
// the endpoint workflow existed (./webhookHandover.ts). Every activity is safe to run twice:
// claims use SKIP LOCKED, delivery rows are unique per (event, endpoint), attempt records are
// keyed by (delivery, attempt), and terminal states are written only from a non-terminal row,
// so the failure streak is counted once per delivery.

export interface WebhookDeps {
  db: Knex;
  temporal: () => Promise<Client>;
}

export interface WebhookOptions {
  /** spec 6 rule 2 / spec 8: the receiver answers within this. */
  timeoutMs: number;
  /** Loopback receivers are for tests and local development only; never on in production. */
  allowLoopback: boolean;
  /** Host resolution used at every attempt; injectable so tests can answer what DNS would. */
  resolve: Resolver;
  retryBaseMs: number;
  maxAttempts: number;
  /** spec 6 rule 3 / spec 8: consecutive permanently failed deliveries before auto-disable. */
  disableAfterFailures: number;
  relayPollMs: number;
  relayBatchSize: number;
  /** Relayed events with closed deliveries older than this are deleted while the relay is idle; 0 keeps them. */
  outboxRetentionDays: number;
  /** How often the idle relay looks for such events (it deletes them in batches of relayBatchSize). */
  pruneEveryMs: number;
  /** Workflow signals in flight at once while relaying a batch. */
  startConcurrency: number;
  /** Attempts in flight at once to one endpoint (its pass starts them in event order). */
  endpointConcurrency: number;
  /** Due deliveries one pass takes; more are taken by the next pass at once. */
  passSize: number;
  /** A pass starts no new attempt after this, so a workflow task never waits long on it. */
  passBudgetMs: number;
  /** A pass whose queue ran dry waits this long for newly relayed deliveries before it ends (0: it ends at once). */
  passLingerMs: number;
}

export function webhookOptionsFromConfig(): WebhookOptions {
  return {
    timeoutMs: config.webhooks.timeoutMs,
    allowLoopback: config.webhooks.allowLoopback,
    resolve: systemResolver,
    retryBaseMs: config.webhooks.retryBaseMs,
    maxAttempts: config.webhooks.maxAttempts,
    disableAfterFailures: config.webhooks.disableAfterFailures,
    relayPollMs: config.webhooks.relayPollMs,
    relayBatchSize: 200,
    outboxRetentionDays: config.webhooks.outboxRetentionDays,
    pruneEveryMs: 10 * 60_000,
    startConcurrency: 64,
    endpointConcurrency: Math.max(1, config.webhooks.endpointConcurrency),
    passSize: 100,
    passBudgetMs: 5_000,
    passLingerMs: 500,
  };
}

export interface DeliverWebhookInput {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  /** Fixed when the delivery starts, so a config change never alters a running schedule. */
  retry: { baseMs: number; maxAttempts: number };
}

export interface WebhookEndpointInput {
  endpointId: string;
  /** Tests only: close when idle this long (default 60 s) / continue as new past this history length (default 2,000). */
  idleCloseMs?: number;
  historyLimit?: number;
}

/** One pass of an endpoint's delivery workflow: what it did, and when it should run again. */
export interface DeliveryPassResult {
  attempted: number;
  delivered: number;
  retrying: number;
  failed: number;
  /** Closed without an attempt: endpoint deleted or inactive, event missing. */
  closed: number;
  /** Due deliveries are left (a full pass, the time budget, or the endpoint was disabled meanwhile): run again now. */
  more: boolean;
  /** When the earliest open delivery is due (epoch ms, by the database's clock), or null when none is open. */
  nextDueAtMs: number | null;
  /**
   * Deliveries still open (pending or retrying) as the pass ended, counted up to
   * OPEN_COUNT_CAP + 1. Absent in results recorded before it was counted.
   */
  open?: number;
  /** The pass's last failed attempt (or delivery closed without one): when, and why. */
  lastFailure?: { atMs: number; error: string };
}

/** retry: the attempt failed and the workflow waits; failed: the delivery is permanently failed and recorded. */
export type AttemptResult = { outcome: 'delivered' } | { outcome: 'retry'; error: string } | { outcome: 'failed'; reason: string };

export function createWebhookActivities(deps: WebhookDeps, overrides: Partial<WebhookOptions> = {}) {
  const opts: WebhookOptions = { ...webhookOptionsFromConfig(), ...overrides };
  return {
    ...createWebhookRelayActivities(deps, opts),
    ...createWebhookDeliveryActivities(deps, opts),
    ...createWebhookHandoverActivities(deps),
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
