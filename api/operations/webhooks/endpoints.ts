import type { PartialModelObject } from 'objection';
import { config } from '../../../lib/config';
import { encrypt } from '../../../lib/crypto';
import { db, readPrepared, shapedRead, TIMESTAMPS_AS_ISO, type WithIsoInstants } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { newId } from '../../../lib/ids';
import { newSigningSecret } from '../../../lib/webhooks/signature';
import { WebhookDelivery, WebhookEndpoint } from '../../../lib/models';
import type { AuthContext } from '../../auth/context';
import { page, single } from '../../output';
import { defineOperation } from '../../operation';
import { keysetClauses, keysetPage, parseLimit } from '../../pagination';
import type { CursorPosition } from '../../../lib/tokens';
import { presentDelivery, presentEndpoint, type AttemptRow, type DeliveryRow, type EndpointRow } from '../../../lib/presenters/webhooks';
import { endpointsOf, findEndpoint, selectEndpoints } from './queries';
import {
  createEndpointInput,
  deleteEndpointInput,
  getEndpointInput,
  listDeliveriesInput,
  listEndpointsInput,
  rotateSecretInput,
  updateEndpointInput,
  webhookDeliverySchema,
  webhookEndpointDeletedSchema,
  webhookEndpointRotatedSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
} from './schema';
import { requireProject } from '../projects/resolve';

// spec 4.8 webhook endpoints. Every operation needs `webhooks:manage`, a scope only OAuth tokens
// can hold (spec 5.1), so an API key always gets 403 scope_missing; client-role accounts are
// refused (spec 5.4). Ids of another workspace are simply not found (spec 1 rule 1).

/** What every webhook-endpoint operation shares: the `webhooks:manage` scope, and no client-role accounts. */
const MANAGED = { scopes: { allOf: ['webhooks:manage'] }, clientRole: 'deny' } as const;

async function requireEndpoint(auth: AuthContext, id: string): Promise<EndpointRow> {
  const row = await findEndpoint(auth, id);
  if (!row) throw errors.notFound('webhook endpoint');
  return row;
}

/** A project binding the caller may make; null (workspace-wide) needs sight of every project. */
async function checkBinding(auth: AuthContext, projectId: string | null): Promise<void> {
  if (projectId === null) {
    if (auth.projectIds)
      throw errors.forbiddenProject(
        'A workspace-wide endpoint receives the events of every project; bind it to one of your projects with `projectId`.',
      );
    return;
  }
  await requireProject(auth, projectId);
}

export const listWebhookEndpoints = defineOperation({
  name: 'webhookEndpoints.list',
  summary: 'List the webhook endpoints of the workspace, newest first, with the total count.',
  kind: 'read',
  ...MANAGED,
  input: listEndpointsInput,
  output: page(webhookEndpointSchema, { withTotal: true }),
  handler: async ({ auth }, input) => {
    // spec 4.8 / spec 8: default 50, values above 200 clamped silently, bad values 400 bad_pagination.
    const limit = parseLimit(input.limit, config.limits.webhookListDefault, config.limits.webhookListMax);
    const [page, counted] = await Promise.all([
      keysetPage<EndpointRow, ReturnType<typeof presentEndpoint>>(selectEndpoints(auth), {
        limit,
        cursor: input.cursor,
        filters: { resource: 'webhook_endpoints' },
        table: 'webhook_endpoints',
        present: presentEndpoint,
      }),
      endpointsOf(auth).resultSize(),
    ]);
    return { data: page.data, pagination: { ...page.pagination, total: counted } };
  },
});

export const getWebhookEndpoint = defineOperation({
  name: 'webhookEndpoints.get',
  summary: 'One webhook endpoint (never its secret).',
  kind: 'read',
  ...MANAGED,
  input: getEndpointInput,
  output: single(webhookEndpointSchema),
  handler: async ({ auth }, input) => ({ data: presentEndpoint(await requireEndpoint(auth, input.endpointId)) }),
});

export const createWebhookEndpoint = defineOperation({
  name: 'webhookEndpoints.create',
  secretResponse: true,
  summary: 'Register a webhook endpoint; the answer shows its signing secret, once.',
  kind: 'write',
  ...MANAGED,
  input: createEndpointInput,
  output: single(webhookEndpointWithSecretSchema),
  handler: async ({ auth }, input) => {
    const projectId = input.projectId ?? null;
    await checkBinding(auth, projectId);
    const max = config.webhooks.maxEndpointsPerWorkspace;
    const existing = await WebhookEndpoint.forWorkspace(auth.workspaceId).whereNull('deleted_at').resultSize();
    if (existing >= max)
      throw errors.unprocessable(`A workspace can have at most ${max} webhook endpoints; delete one first.`, { limit: max });
    const secret = newSigningSecret();
    const id = newId('webhookEndpoint');
    await WebhookEndpoint.query().insert({
      id,
      workspace_id: auth.workspaceId,
      project_id: projectId,
      url: input.url,
      name: input.name ?? '',
      events: input.events,
      secret_enc: encrypt(secret),
      secret_last4: secret.slice(-4),
      created_by: auth.principal.id,
    });
    return { data: { ...presentEndpoint(await requireEndpoint(auth, id)), secret } };
  },
});

export const updateWebhookEndpoint = defineOperation({
  name: 'webhookEndpoints.update',
  summary: 'Change url, events, name, project binding or isActive; isActive true re-enables and clears the failure streak.',
  kind: 'write',
  ...MANAGED,
  input: updateEndpointInput,
  output: single(webhookEndpointSchema),
  handler: async ({ auth }, input) => {
    const current = await requireEndpoint(auth, input.endpointId);
    if (input.projectId !== undefined) await checkBinding(auth, input.projectId);
    const now = new Date();
    const patch: PartialModelObject<WebhookEndpoint> = { updated_at: now };
    if (input.url !== undefined) patch.url = input.url;
    if (input.events !== undefined) patch.events = input.events;
    if (input.name !== undefined) patch.name = input.name;
    if (input.projectId !== undefined) patch.project_id = input.projectId;
    if (input.isActive === true) {
      // spec 3.5 / spec 6 rule 5: recovery; the streak starts over.
      Object.assign(patch, { is_active: true, disabled_reason: null, disabled_at: null, consecutive_failures: 0 });
    } else if (input.isActive === false && current.is_active) {
      Object.assign(patch, { is_active: false, disabled_reason: 'Disabled through the API.', disabled_at: now });
    }
    await endpointsOf(auth).findById(current.id).patch(patch);
    return { data: presentEndpoint(await requireEndpoint(auth, current.id)) };
  },
});

export const rotateWebhookSecret = defineOperation({
  name: 'webhookEndpoints.rotateSecret',
  secretResponse: true,
  summary: 'Issue a new signing secret, shown once; optionally keep signing with the old one for a while.',
  kind: 'write',
  ...MANAGED,
  input: rotateSecretInput,
  output: single(webhookEndpointRotatedSchema),
  handler: async ({ auth }, input) => {
    const current = await requireEndpoint(auth, input.endpointId);
    const keepSeconds = input.previousSecretExpiresInSeconds ?? 0;
    const previousExpiresAt = keepSeconds > 0 ? new Date(Date.now() + keepSeconds * 1000) : null;
    const secret = newSigningSecret();
    await endpointsOf(auth)
      .findById(current.id)
      .patch({
        secret_enc: encrypt(secret),
        secret_last4: secret.slice(-4),
        // In SET, `secret_enc` still reads the secret being replaced.
        previous_secret_enc: previousExpiresAt ? db().raw('secret_enc') : null,
        previous_secret_expires_at: previousExpiresAt,
        updated_at: new Date(),
      });
    return {
      data: {
        ...presentEndpoint(await requireEndpoint(auth, current.id)),
        secret,
        previousSecretExpiresAt: previousExpiresAt?.toISOString() ?? null,
      },
    };
  },
});

export const deleteWebhookEndpoint = defineOperation({
  name: 'webhookEndpoints.delete',
  summary: 'Delete a webhook endpoint; deliveries still pending end as failed with reason endpoint_deleted.',
  kind: 'write',
  ...MANAGED,
  input: deleteEndpointInput,
  output: single(webhookEndpointDeletedSchema),
  handler: async ({ auth }, input) => {
    const current = await requireEndpoint(auth, input.endpointId);
    // Soft: in-flight deliveries still find the row and end recorded; the secret is wiped now.
    await endpointsOf(auth).findById(current.id).patch({
      deleted_at: new Date(),
      is_active: false,
      disabled_reason: 'deleted',
      secret_enc: null,
      previous_secret_enc: null,
      previous_secret_expires_at: null,
      updated_at: new Date(),
    });
    return { data: { id: current.id, deleted: true as const } };
  },
});

/**
 * An endpoint's deliveries (GET /v1/webhook-endpoints/{id}/deliveries), by shape: whether a status
 * and an event filter them, whether a cursor positions the page, the page size.
 */
const deliveriesPage = shapedRead(
  (
    shape: { status: boolean; eventId: boolean; cursor: boolean; limit: number },
    param: (name: 'workspaceId' | 'endpointId' | 'status' | 'eventId' | 'cursorCreatedAt' | 'cursorId') => string,
  ) => {
    const q = WebhookDelivery.forWorkspace(param('workspaceId')).where('webhook_deliveries.endpoint_id', param('endpointId'));
    if (shape.status) q.where('webhook_deliveries.status', param('status'));
    if (shape.eventId) q.where('webhook_deliveries.event_id', param('eventId'));
    const pos = shape.cursor ? { createdAt: param('cursorCreatedAt'), id: param('cursorId') } : null;
    return keysetClauses(q.toKnexQuery(), pos, shape.limit, 'webhook_deliveries');
  },
);

/** The attempts of a page's deliveries, in order; the ids as one array, so one text serves every page. */
const attemptsOf = shapedRead((_shape: null, param: (name: 'deliveryIds') => string) =>
  db()('webhook_delivery_attempts')
    .whereRaw('delivery_id = any(?)', [param('deliveryIds')])
    .orderBy([{ column: 'delivery_id' }, { column: 'attempt' }]),
);

export const listWebhookDeliveries = defineOperation({
  name: 'webhookEndpoints.deliveries',
  summary: 'Deliveries to one endpoint, newest first, each with its attempts (time, status, latency, error).',
  kind: 'read',
  ...MANAGED,
  input: listDeliveriesInput,
  output: page(webhookDeliverySchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit, config.limits.webhookListDefault, config.limits.webhookListMax);
    const endpoint = await requireEndpoint(auth, input.endpointId);
    // As the post list reads its page: compiled once per shape, plain rows from a prepared
    // statement, the instants as ISO strings cut from Postgres' text; the page's attempts alike.
    const read = (pos: CursorPosition | null) =>
      readPrepared<WithIsoInstants<DeliveryRow>>(
        deliveriesPage(
          { status: input.status !== undefined, eventId: input.eventId !== undefined, cursor: pos !== null, limit },
          {
            workspaceId: auth.workspaceId,
            endpointId: endpoint.id,
            status: input.status,
            eventId: input.eventId,
            cursorCreatedAt: pos?.createdAt,
            cursorId: pos?.id,
          },
        ),
        { types: TIMESTAMPS_AS_ISO },
      );
    const page = await keysetPage<WithIsoInstants<DeliveryRow>, WithIsoInstants<DeliveryRow>>(read, {
      limit,
      cursor: input.cursor,
      filters: { endpointId: endpoint.id, status: input.status, eventId: input.eventId },
      table: 'webhook_deliveries',
      present: (r) => r,
    });
    const attempts = page.data.length
      ? await readPrepared<WithIsoInstants<AttemptRow>>(attemptsOf(null, { deliveryIds: page.data.map((d) => d.id) }), {
          types: TIMESTAMPS_AS_ISO,
        })
      : [];
    const byDelivery = new Map<string, WithIsoInstants<AttemptRow>[]>();
    for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
    return { data: page.data.map((d) => presentDelivery(d, byDelivery.get(d.id) ?? [])), pagination: page.pagination };
  },
});
