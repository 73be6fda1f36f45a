import { z } from 'zod';
import { config } from '../../../lib/config';
import { SUBSCRIBABLE_EVENTS } from '../../../lib/webhooks/payload';
import { receiverUrlProblem } from '../../../lib/webhooks/url';
import { paginationInput } from '../../pagination';

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

// ---- outputs (spec 2.14; lib/presenters/webhooks.ts) --------------------------------------------

export {
  webhookDeliverySchema,
  webhookEndpointDeletedSchema,
  webhookEndpointRotatedSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../../../lib/presenters/webhooks';
