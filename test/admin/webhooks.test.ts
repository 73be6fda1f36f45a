// Webhook endpoints from the operator CLI (issue 29 item 7): create, list, show with deliveries
// and attempts, disable / enable, and redelivery of one event through the endpoint's delivery
// workflow, against a real receiver, a worker on the run's task queue and the outbox relay.

import assert from 'node:assert/strict';
import type { NativeConnection } from '@temporalio/worker';
import { createWebhookActivities } from '../../activities/webhooks';
import { db } from '../../lib/db';
import { randomBase62 } from '../../lib/ids';
import { temporalClient } from '../../lib/temporal/client';
import { webhookRelayWorkflow } from '../../workflows/webhookRelay';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { client, useApi } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { waitFor } from '../support/wait';
import { answer, emit, receiver, stopRelay, type Receiver } from '../webhooks/support';
import { fails, ok } from '../support/admin';

describe('operator CLI: webhook endpoints (bin/admin webhook ...)', function () {
  this.timeout(300_000);
  const api = useApi();
  let hooks: Receiver;
  let running: { worker: ServiceWorker; connection: NativeConnection; done: Promise<void> };
  const relayId = `webhook-outbox-relay-admin-${randomBase62(8)}`;

  before(async () => {
    hooks = await receiver(answer(500));
    // The run's own task queue: redelivery starts the endpoint workflow where the service does.
    const { worker, connection } = await createWorker({
      activities: createWebhookActivities({ db: db(), temporal: temporalClient }, { retryBaseMs: 50, maxAttempts: 2 }),
    });
    running = { worker, connection, done: worker.run() };
    const c = await temporalClient();
    await c.workflow.start(webhookRelayWorkflow, {
      taskQueue: worker.main.options.taskQueue,
      workflowId: relayId,
      args: [{ runMs: 5_000 }],
    });
  });
  after(async () => {
    await stopRelay(relayId);
    running.worker.shutdown();
    await running.done;
    await running.connection.close();
    await hooks.close();
  });

  it('creates, lists and shows endpoints; redelivers a failed event; disables and enables', async () => {
    const { workspace: w } = await workspaceWithKey();
    const created = await ok([
      'webhook',
      'create',
      '--workspace',
      w.id,
      '--url',
      hooks.url,
      '--event',
      'post.created,post.published',
      '--name',
      'CRM',
    ]);
    assert.match(created.id, /^whe_/);
    assert.match(created.secret, /^whsec_/);
    assert.deepEqual([created.name, created.events, created.isActive], ['CRM', ['post.created', 'post.published'], true]);

    // What the API shows a client with webhooks:manage is what the CLI made.
    const user = await member(w.id, 'Admin');
    const reg = await fetch(`${api.url}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Webhook admin test', redirect_uris: ['http://127.0.0.1:9/callback'] }),
    });
    const { client_id: clientId } = (await reg.json()) as { client_id: string };
    const token = await ok(['oauth', 'token', '--user', user.id, '--client', clientId, '--scopes', 'webhooks:manage']);
    const call = client(api.url, token.access_token);
    const viaApi = await call('GET', `/v1/webhook-endpoints/${created.id}`);
    assert.equal(viaApi.status, 200, JSON.stringify(viaApi.body));
    assert.equal(viaApi.body.data.secretLast4, created.secret.slice(-4));

    const listed = await ok(['webhook', 'list', '--workspace', w.id]);
    assert.equal(listed.total, 1);
    assert.equal(listed.endpoints[0].id, created.id);
    assert.ok(!JSON.stringify(listed).includes(created.secret), 'a list never shows the secret');

    // The receiver fails both attempts: the delivery ends failed.
    const eventId = await emit(w.id, 'post.created', { post: { id: 'post_x' } });
    const failed = await waitFor(async () => {
      const s = await ok(['webhook', 'show', '--endpoint', created.id]);
      return s.deliveries[0]?.status === 'failed' ? s : null;
    }, 60_000);
    assert.equal(failed.workspaceId, w.id);
    assert.equal(failed.consecutiveFailures, 1);
    const delivery = failed.deliveries[0];
    assert.deepEqual([delivery.eventId, delivery.attemptCount], [eventId, 2]);
    assert.deepEqual(
      delivery.attempts.map((a: any) => [a.attempt, a.statusCode]),
      [
        [1, 500],
        [2, 500],
      ],
    );
    assert.ok(!JSON.stringify(failed).includes(created.secret));

    // Fixed receiver, one redelivery: the same event, signed, numbered after the earlier attempts.
    hooks.behave(answer(200));
    const before = hooks.received.length;
    const redelivered = await ok(['webhook', 'redeliver', '--delivery', delivery.id]);
    assert.deepEqual(
      [redelivered.deliveryId, redelivered.eventId, redelivered.status, redelivered.nextAttempt],
      [delivery.id, eventId, 'pending', 3],
    );
    const delivered = await waitFor(async () => {
      const s = await ok(['webhook', 'show', '--endpoint', created.id]);
      return s.deliveries[0]?.status === 'delivered' ? s : null;
    }, 60_000);
    assert.deepEqual(
      delivered.deliveries[0].attempts.map((a: any) => [a.attempt, a.statusCode]),
      [
        [1, 500],
        [2, 500],
        [3, 200],
      ],
    );
    assert.equal(delivered.consecutiveFailures, 0);
    const sent = hooks.received.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.headers['webhook-id'], eventId);
    assert.equal(sent[0]!.headers['webhook-attempt'], '3');

    // By endpoint and event id, too; a delivered event can be sent again.
    const again = await ok(['webhook', 'redeliver', '--endpoint', created.id, '--event', eventId]);
    assert.equal(again.deliveryId, delivery.id);
    await waitFor(async () => hooks.received.length === before + 2 || null, 60_000);

    const disabled = await ok(['webhook', 'disable', '--endpoint', created.id]);
    assert.deepEqual([disabled.isActive, disabled.disabledReason], [false, 'Disabled through the API.']);
    await waitFor(
      async () => (await ok(['webhook', 'show', '--endpoint', created.id])).deliveries[0].status === 'delivered' || null,
      60_000,
    );
    await fails(['webhook', 'redeliver', '--delivery', delivery.id], 1, /is disabled; enable it first/);
    const enabled = await ok(['webhook', 'enable', '--endpoint', created.id]);
    assert.deepEqual([enabled.isActive, enabled.disabledReason, enabled.consecutiveFailures], [true, null, 0]);
    assert.equal((await call('GET', `/v1/webhook-endpoints/${created.id}`)).body.data.isActive, true);
  });

  it('refuses what the API refuses (exit 1) and malformed command lines (exit 2)', async () => {
    const { workspace: w } = await workspaceWithKey();
    await fails(
      ['webhook', 'create', '--workspace', w.id, '--url', hooks.url, '--event', 'post.nonsense'],
      1,
      /webhookEndpoints\.create refused|unknown event name "post\.nonsense"/,
    );
    await fails(['webhook', 'create', '--workspace', w.id, '--url', 'ftp://example.com/x', '--event', 'post.created'], 1, /url/);
    await fails(['webhook', 'create', '--workspace', w.id, '--url', hooks.url], 2, /missing --event/);
    await fails(['webhook', 'show', '--endpoint', 'whe_missing'], 1, /no webhook endpoint whe_missing/);
    await fails(['webhook', 'enable', '--endpoint', 'whe_missing'], 1, /no webhook endpoint whe_missing/);
    await fails(['webhook', 'redeliver', '--delivery', 'whd_missing'], 1, /no webhook delivery whd_missing/);
    await fails(['webhook', 'redeliver'], 2, /give --delivery, or --endpoint with --event/);
    await fails(
      ['webhook', 'redeliver', '--delivery', 'whd_x', '--endpoint', 'whe_x', '--event', 'evt_x'],
      2,
      /give --delivery, or --endpoint with --event/,
    );
    await fails(['webhook', 'redeliver', '--endpoint', 'whe_x'], 2, /--endpoint and --event go together/);
    await fails(['webhook', 'list', '--workspace', w.id, '--limit', '0'], 2, /--limit must be at least 1/);
  });
});
