import { z } from 'zod';
import { config } from '../../../lib/config';
import { SUBSCRIBABLE_EVENTS } from '../../../lib/webhooks/payload';
import { receiverUrlProblem } from '../../../lib/webhooks/url';
import { paginationInput } from '../../pagination';
import { component, dateTime, nullableDateTime } from '../../output';

// Inputs of the webhook-endpoint operations (spec 4.8; shapes the spec leaves open are
// documented in docs/webhooks.md). Bodies refuse unknown fields (habit 4).

const endpointId = z.string().min(1).max(100);
const projectId = z.string().min(1).max(100);

const url = z.string().superRefine((s, ctx) => {
  const problem = receiverUrlProblem(s, { allowHttp: config.webhooks.allowHttp, allowLoopback: config.webhooks.allowLoopback });
  if (problem) ctx.addIssue({ code: 'custom', message: `\`url\` ${problem}` });
});

const events = z
  .array(z.string().max(100))
  .min(1, '`events` must name at least one event.')
  .max(50)
  .superRefine((names, ctx) => {
    const unknown = names.filter((n) => !SUBSCRIBABLE_EVENTS.includes(n));
    if (unknown.length) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown event name ${unknown.map((n) => JSON.stringify(n)).join(', ')}; subscribable events: ${SUBSCRIBABLE_EVENTS.join(', ')}.`,
      });
    }
  })
  .transform((names) => [...new Set(names)]);

const name = z.string().max(200, '`name` must be at most 200 characters.');

export const listEndpointsInput = z.object({ ...paginationInput }).strict();

export const getEndpointInput = z.object({ endpointId }).strict();

export const createEndpointInput = z
  .object({
    url,
    events,
    name: name.optional(),
    /** Bind the endpoint to one project: it then receives only that project's events. */
    projectId: projectId.optional(),
  })
  .strict();

export const updateEndpointInput = z
  .object({
    endpointId,
    url: url.optional(),
    events: events.optional(),
    name: name.optional(),
    projectId: projectId.nullable().optional(),
    isActive: z.boolean().optional(),
  })
  .strict()
  .refine((b) => ['url', 'events', 'name', 'projectId', 'isActive'].some((k) => (b as Record<string, unknown>)[k] !== undefined), {
    message: 'send at least one of url, events, name, projectId, isActive.',
  });

export const MAX_PREVIOUS_SECRET_SECONDS = 7 * 24 * 3600;

export const rotateSecretInput = z
  .object({
    endpointId,
    /**
     * Keep signing with the old secret too for this long (a second `v1` in the header), so
     * receivers can switch without rejecting deliveries. Default 0: the old secret dies now.
     */
    previousSecretExpiresInSeconds: z.number().int().min(0).max(MAX_PREVIOUS_SECRET_SECONDS).optional(),
  })
  .strict();

export const deleteEndpointInput = z.object({ endpointId }).strict();

export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed'] as const;

export const listDeliveriesInput = z
  .object({
    endpointId,
    status: z.enum(DELIVERY_STATUSES).optional(),
    eventId: z.string().min(1).max(100).optional(),
    ...paginationInput,
  })
  .strict();

// ---- outputs (spec 2.14) -------------------------------------------------------------------------

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

export const webhookEndpointSchema = component('WebhookEndpoint', z.object(endpointShape).strict());

/** Create: the signing secret, shown once. */
export const webhookEndpointWithSecretSchema = component(
  'WebhookEndpointWithSecret',
  z.object({ ...endpointShape, secret: z.string() }).strict(),
);

/** Rotate: the new secret, and until when the previous one still signs. */
export const webhookEndpointRotatedSchema = component(
  'WebhookEndpointRotated',
  z.object({ ...endpointShape, secret: z.string(), previousSecretExpiresAt: nullableDateTime }).strict(),
);

export const webhookEndpointDeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).strict();

export const webhookDeliverySchema = component(
  'WebhookDelivery',
  z
    .object({
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
    })
    .strict(),
);

export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;
