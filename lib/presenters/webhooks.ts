import { z } from 'zod';
import { isoOf, type WithIsoInstants } from '../db';
import type { WebhookDeliveryColumns } from '../models';
import { dateTime, nullableDateTime, objectComponent } from './output';

// spec 2.14: the webhook endpoint as the API shows it. The secret never appears here; only the
// create and rotate answers add it, once.

const endpointShape = {
  id: z.string().describe('whe_*'),
  url: z.string(),
  name: z.string(),
  events: z.array(z.string()),
  isActive: z.boolean(),
  disabledReason: z.string().nullable().describe('Automatic disables begin with `repeated_failures`.'),
  projectId: z.string().nullable(),
  secretLast4: z.string(),
  consecutiveFailures: z.number().int(),
  disabledAt: nullableDateTime,
  lastSuccessAt: nullableDateTime,
  lastFailureAt: nullableDateTime,
  createdAt: dateTime,
  updatedAt: dateTime,
};

export const webhookEndpointSchema = objectComponent('WebhookEndpoint', endpointShape);

/** Create: the signing secret, shown once. */
export const webhookEndpointWithSecretSchema = objectComponent('WebhookEndpointWithSecret', { ...endpointShape, secret: z.string() });

/** Rotate: the new secret, and until when the previous one still signs. */
export const webhookEndpointRotatedSchema = objectComponent('WebhookEndpointRotated', {
  ...endpointShape,
  secret: z.string(),
  previousSecretExpiresAt: nullableDateTime,
});

export const webhookEndpointDeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).strict();

export const webhookDeliverySchema = objectComponent('WebhookDelivery', {
  id: z.string(),
  endpointId: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  eventCreatedAt: dateTime,
  status: z.string(),
  attemptCount: z.number().int(),
  nextAttemptAt: nullableDateTime,
  deliveredAt: nullableDateTime,
  failedAt: nullableDateTime,
  failureReason: z.string().nullable(),
  lastError: z.string().nullable(),
  attempts: z.array(
    z
      .object({
        attempt: z.number().int(),
        at: dateTime,
        outcome: z.string(),
        statusCode: z.number().int().nullable(),
        durationMs: z.number().int(),
        error: z.string().nullable(),
        remoteAddress: z.string().nullable(),
      })
      .strict(),
  ),
  createdAt: dateTime,
  updatedAt: dateTime,
});

export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export interface EndpointRow {
  id: string;
  workspace_id: string;
  project_id: string | null;
  url: string;
  name: string;
  events: string[];
  is_active: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  secret_last4: string;
  previous_secret_expires_at: Date | null;
  consecutive_failures: number;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | string | null) => (d ? isoOf(d) : null);

export function presentEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    url: r.url,
    name: r.name,
    events: r.events,
    isActive: r.is_active,
    // null while active; `repeated_failures…` when disabled by spec 6 rule 3.
    disabledReason: r.is_active ? null : r.disabled_reason,
    projectId: r.project_id,
    secretLast4: r.secret_last4,
    // Beyond spec 2.14, for operators; clients ignore unknown fields (spec 9 rule 3).
    consecutiveFailures: r.consecutive_failures,
    disabledAt: r.is_active ? null : iso(r.disabled_at),
    lastSuccessAt: iso(r.last_success_at),
    lastFailureAt: iso(r.last_failure_at),
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** A delivery as the API reads it: the row of the model. */
export type DeliveryRow = WebhookDeliveryColumns;

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  outcome: string;
  error: string | null;
  remote_address: string | null;
}

export function presentAttempt(a: WithIsoInstants<AttemptRow>) {
  return {
    attempt: a.attempt,
    at: isoOf(a.started_at),
    outcome: a.outcome,
    statusCode: a.status_code,
    durationMs: a.duration_ms,
    error: a.error,
    remoteAddress: a.remote_address,
  };
}

export function presentDelivery(d: WithIsoInstants<DeliveryRow>, attempts: WithIsoInstants<AttemptRow>[]): WebhookDelivery {
  return {
    id: d.id,
    endpointId: d.endpoint_id,
    eventId: d.event_id,
    eventType: d.event_type,
    eventCreatedAt: isoOf(d.event_created_at),
    status: d.status,
    attemptCount: d.attempt_count,
    nextAttemptAt: iso(d.next_attempt_at),
    deliveredAt: iso(d.delivered_at),
    failedAt: iso(d.failed_at),
    failureReason: d.failure_reason,
    lastError: d.last_error,
    attempts: attempts.map(presentAttempt),
    createdAt: isoOf(d.created_at),
    updatedAt: isoOf(d.updated_at),
  };
}
