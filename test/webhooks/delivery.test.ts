import assert from 'node:assert/strict';
import { WorkflowNotFoundError } from '@temporalio/client';
import { workflowMetadataQuery } from '@temporalio/workflow';
import { db } from '../../lib/db';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { newId } from '../../lib/ids';
import { endpointDeliveryStatusQuery } from '../../lib/temporal/contracts/deliverWebhook';
import { deliverWebhookWorkflow } from '../../workflows/deliverWebhook';
import { webhookRelayWorkflow } from '../../workflows/webhookRelay';
import { maybeRecordHistory } from '../support/histories';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { oauthToken, startOAuthApi } from '../oauth/support';
import {
  answer,
  deliveriesOf,
  emit,
  endpointRow,
  receiver,
  sleep,
  startWebhookWorker,
  stopRelay,
  waitFor,
  type Receiver,
  type WebhookWorker,
} from './support';
import { verifyWebhookSignature } from '../../sim/webhooks/verifier';

// spec 6 end to end: committed outbox events → relay workflow → one delivery workflow per
// endpoint on the real Temporal dev server → real node:http receivers on 127.0.0.1.
// Loopback receivers are allowed by the worker's explicit options here; the refusal path with
// the allowance off is the last block of this file and test/webhooks/send.test.ts.
//
// RECORD_HISTORIES=1 saves the histories of these runs under test/replay/histories/ (the
// endpoint workflows' and the relay's; test/support/histories.ts).

const RETRY = { retryBaseMs: 200, maxAttempts: 3, timeoutMs: 1_000, allowLoopback: true };

const record = maybeRecordHistory;

describe('webhook delivery (real Temporal, real receivers)', function () {
  this.timeout(120_000);
  let api: Awaited<ReturnType<typeof startOAuthApi>>;
  let worker: WebhookWorker;
  const receivers: Receiver[] = [];

  before(async () => {
    api = await startOAuthApi();
    worker = await startWebhookWorker(RETRY);
  });
  after(async () => {
    await worker.stop();
    await record(worker.relayId, 'webhookRelay-cancelled');
    await Promise.all(receivers.map((r) => r.close()));
    api.restore();
    await api.close();
  });

  async function rx(behaviour = answer(200)) {
    const r = await receiver(behaviour);
    receivers.push(r);
    return r;
  }

  /** A fresh workspace (so endpoints of other tests never match), its API key and an OAuth manager. */
  async function workspace() {
    const w = await workspaceWithKey({ projects: 2 });
    const manage = client(api.url, await oauthToken(api.url, w.workspace.id));
    const endpoint = async (body: Record<string, unknown>) => {
      const res = await manage('POST', '/v1/webhook-endpoints', { body });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data as { id: string; secret: string; url: string };
    };
    return { w, manage, endpoint, call: client(api.url, w.key) };
  }

  async function terminal(endpointId: string, count: number, timeoutMs = 30_000) {
    return waitFor(
      async () => {
        const rows = await deliveriesOf(endpointId);
        return rows.length >= count && rows.every((d: { status: string }) => d.status === 'delivered' || d.status === 'failed') && rows;
      },
      timeoutMs,
      `${count} finished deliveries to ${endpointId}`,
    );
  }

  /**
   * Delivery is at least once: a second POST of an event is only ever the retry of an attempt
   * that did not get through in time (a starved machine), deduped by receivers on the event id.
   * So the POSTs beyond one per event are bounded by the endpoint's attempts that failed.
   */
  async function assertDuplicatesAreRetries(endpointId: string, posts: number, events: number) {
    const failed = await db()('webhook_delivery_attempts as t')
      .join('webhook_deliveries as d', 'd.id', 't.delivery_id')
      .where('d.endpoint_id', endpointId)
      .whereNot('t.outcome', 'delivered')
      .count({ n: '*' })
      .first();
    assert.ok(posts - events <= Number(failed!.n), `${posts - events} duplicate POSTs but only ${failed!.n} failed attempts`);
  }

  it('delivers a real post.updated, signed so that an independent verifier accepts it', async () => {
    const { w, endpoint, call, manage } = await workspace();
    const r = await rx();
    const e = await endpoint({ url: r.url, events: ['post.updated'] });
    const post = (await call('POST', '/v1/posts', { body: { projectId: w.project.id, content: 'First draft' } })).body.data;
    const patched = await call('PATCH', `/v1/posts/${post.id}`, { body: { content: 'Second draft' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));

    await waitFor(async () => r.received.length >= 1, 20_000, 'the delivery');
    await sleep(300);
    assert.equal(r.received.length, 1, 'post.created is not subscribed; post.updated arrives once');
    const got = r.received[0]!;
    const verdict = verifyWebhookSignature(got.body, got.headers['webhook-signature'] as string, e.secret);
    assert.equal(verdict.ok, true, JSON.stringify(verdict));
    assert.equal(verifyWebhookSignature(got.body, got.headers['webhook-signature'] as string, 'whsec_wrong').ok, false);
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['webhook-attempt'], '1');

    const event = await db()('outbox_events').where({ workspace_id: w.workspace.id, type: 'post.updated' }).first();
    assert.deepEqual(Object.keys(got.json).sort(), ['createdAt', 'data', 'id', 'projectId', 'type', 'workspaceId']);
    assert.equal(got.json.id, event.id);
    assert.equal(got.headers['webhook-id'], event.id);
    assert.equal(got.json.type, 'post.updated');
    assert.equal(got.json.workspaceId, w.workspace.id);
    assert.equal(got.json.projectId, w.project.id);
    assert.equal(got.json.createdAt, event.created_at.toISOString());
    assert.equal(got.json.data.post.id, post.id);
    assert.equal(got.json.data.post.content, 'Second draft');

    const [delivery] = await terminal(e.id, 1);
    assert.equal(delivery.status, 'delivered');
    assert.notEqual((await db()('outbox_events').where({ id: event.id }).first()).dispatched_at, null);
    const list = await manage('GET', `/v1/webhook-endpoints/${e.id}/deliveries`);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.equal(list.body.data.length, 1);
    const d = list.body.data[0];
    assert.equal(d.eventId, event.id);
    assert.equal(d.eventType, 'post.updated');
    assert.equal(d.status, 'delivered');
    assert.equal(d.attempts.length, 1);
    assert.equal(d.attempts[0].outcome, 'delivered');
    assert.equal(d.attempts[0].statusCode, 200);
    assert.equal(d.attempts[0].remoteAddress, '127.0.0.1');
    assert.equal(typeof d.attempts[0].durationMs, 'number');
    await record(workflowIds.webhookEndpoint(e.id), 'webhookEndpoint-delivered-first-attempt');
  });

  it('retries a failing receiver on the backoff schedule, then succeeds', async () => {
    const { w, endpoint, manage } = await workspace();
    const r = await rx((_req, res, n) => {
      res.writeHead(n === 1 ? 500 : n === 2 ? 503 : 204).end();
    });
    const e = await endpoint({ url: r.url, events: ['job.completed'] });
    const eventId = await emit(w.workspace.id, 'job.completed', { job: { id: 'job_x', status: 'DONE' } }, w.project.id);
    const [delivery] = await terminal(e.id, 1);
    assert.equal(delivery.status, 'delivered');
    assert.equal(delivery.attempt_count, 3);
    assert.equal(r.received.length, 3);
    assert.deepEqual(
      r.received.map((x) => x.headers['webhook-attempt']),
      ['1', '2', '3'],
    );
    assert.ok(
      r.received.every((x) => x.body === r.received[0]!.body),
      'every attempt sends the same bytes',
    );
    assert.ok(r.received.every((x) => verifyWebhookSignature(x.body, x.headers['webhook-signature'] as string, e.secret).ok));
    // Waits of base × 1 and base × 6, ±10 %.
    const gap1 = r.received[1]!.at - r.received[0]!.at;
    const gap2 = r.received[2]!.at - r.received[1]!.at;
    assert.ok(gap1 >= 170 && gap1 < 1_500, `first wait ${gap1} ms`);
    assert.ok(gap2 >= 1_050 && gap2 < 3_000, `second wait ${gap2} ms`);
    const attempts = (await manage('GET', `/v1/webhook-endpoints/${e.id}/deliveries?eventId=${eventId}`)).body.data[0].attempts;
    assert.deepEqual(
      attempts.map((a: { statusCode: number }) => a.statusCode),
      [500, 503, 204],
    );
    assert.deepEqual(
      attempts.map((a: { outcome: string }) => a.outcome),
      ['failed', 'failed', 'delivered'],
    );
    assert.equal(attempts[0].error, 'http_status: HTTP 500');
    assert.equal((await endpointRow(e.id)).consecutive_failures, 0);
    // What an operator reads in the UI (docs/operations.md "What the workflows show"): the queue
    // drained, and the last failure kept past the pass that delivered.
    const handle = (await temporalClient()).workflow.getHandle(workflowIds.webhookEndpoint(e.id));
    const details = await waitFor(async () => {
      const d = (await handle.query(workflowMetadataQuery)).currentDetails ?? '';
      return d.startsWith('Queue: 0 open deliveries') && d;
    });
    assert.match(
      details,
      /^Queue: 0 open deliveries \(none waiting\)\. Pass \d+: 1 attempted, 1 delivered, .*Last failure at .+: http_status: HTTP 503\.$/,
    );
    await record(workflowIds.webhookEndpoint(e.id), 'webhookEndpoint-retried-then-delivered');
  });

  it('fans out to every subscribed endpoint, honouring project binding and event names', async () => {
    const { w, endpoint } = await workspace();
    const [a, b, c] = [await rx(), await rx(), await rx()];
    const all = await endpoint({ url: a.url, events: ['post.created', 'post.deleted'] });
    const bound = await endpoint({ url: b.url, events: ['post.created'], projectId: w.projects[1]!.id });
    const other = await endpoint({ url: c.url, events: ['post.published'] });
    await emit(w.workspace.id, 'post.created', { post: { id: 'p1' } }, w.projects[0]!.id);
    await emit(w.workspace.id, 'post.created', { post: { id: 'p2' } }, w.projects[1]!.id);
    await emit(w.workspace.id, 'post.deleted', { post: { id: 'p3' } }, w.projects[1]!.id);
    await emit(w.workspace.id, 'post.updated', { post: { id: 'p4' } }, w.projects[1]!.id);
    await terminal(all.id, 3);
    await terminal(bound.id, 1);
    await sleep(500);
    assert.deepEqual(a.received.map((x) => x.json.data.post.id).sort(), ['p1', 'p2', 'p3']);
    assert.deepEqual(
      b.received.map((x) => x.json.data.post.id),
      ['p2'],
    );
    assert.equal(c.received.length, 0);
    assert.equal((await deliveriesOf(other.id)).length, 0);
  });

  it('delivers through one workflow per endpoint, first attempts started in event order', async () => {
    const { w, endpoint } = await workspace();
    const [a, b] = [await rx(), await rx()];
    const ea = await endpoint({ url: a.url, events: ['post.updated'] });
    const eb = await endpoint({ url: b.url, events: ['post.updated'] });
    const N = 40;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push(await emit(w.workspace.id, 'post.updated', { n: i }));
    await terminal(ea.id, N);
    await terminal(eb.id, N);
    const temporal = await temporalClient();
    for (const e of [ea, eb]) {
      const handle = temporal.workflow.getHandle(workflowIds.webhookEndpoint(e.id));
      assert.equal((await handle.describe()).type, 'webhookEndpointWorkflow');
      const status = await handle.query(endpointDeliveryStatusQuery);
      assert.ok(status.passes >= 1 && status.passes <= N, `${status.passes} passes for ${N} deliveries`);
      const perPair = await temporal.workflow
        .getHandle(workflowIds.webhookDelivery(ids[0]!, e.id))
        .describe()
        .then(
          () => null,
          (err: unknown) => err,
        );
      assert.ok(perPair instanceof WorkflowNotFoundError, 'no workflow per (event, endpoint)');
      const rows = (await db()('webhook_delivery_attempts as t')
        .join('webhook_deliveries as d', 'd.id', 't.delivery_id')
        .where({ 'd.endpoint_id': e.id, 't.attempt': 1 })
        .select('d.event_id', 't.started_at')) as Array<{ event_id: string; started_at: Date }>;
      const startedAt = new Map(rows.map((x) => [x.event_id, x.started_at.getTime()]));
      assert.equal(startedAt.size, N);
      for (let i = 1; i < N; i++)
        assert.ok(startedAt.get(ids[i]!)! >= startedAt.get(ids[i - 1]!)!, `event ${i} was first attempted before event ${i - 1}`);
    }
    assert.deepEqual(new Set(a.received.map((x) => x.json.id)), new Set(ids));
    await assertDuplicatesAreRetries(ea.id, a.received.length, N);
    await record(workflowIds.webhookEndpoint(ea.id), 'webhookEndpoint-delivered-in-order');
  });

  it('takes events relayed while its pass runs into that same pass (NOTIFY), not one pass per event', async () => {
    const { w, endpoint } = await workspace();
    const a = await rx();
    const e = await endpoint({ url: a.url, events: ['post.updated'] });
    const N = 20;
    const ids: string[] = [];
    // A steady stream, 100 ms apart: without the pass taking new rows itself, each event would
    // be its own signal, workflow task and pass.
    for (let i = 0; i < N; i++) {
      ids.push(await emit(w.workspace.id, 'post.updated', { n: i }));
      await sleep(100);
    }
    await terminal(e.id, N);
    const status = await (await temporalClient()).workflow.getHandle(workflowIds.webhookEndpoint(e.id)).query(endpointDeliveryStatusQuery);
    assert.ok(status.passes <= N / 4, `${status.passes} passes for ${N} events relayed one by one`);
    assert.deepEqual(
      a.received.map((x) => x.json.id),
      ids,
      'each event once, in event order',
    );
  });

  it('drains a per-delivery workflow of the former design: its next attempt hands the delivery to the endpoint workflow', async () => {
    const { w, endpoint } = await workspace();
    const r = await rx();
    const e = await endpoint({ url: r.url, events: ['post.updated'] });
    // As the former relay left them: the event dispatched, its delivery row pending, owned by a
    // workflow of its own that is about to make its first attempt.
    const eventId = newId('event');
    await db()('outbox_events').insert({
      id: eventId,
      workspace_id: w.workspace.id,
      project_id: null,
      type: 'post.updated',
      data: JSON.stringify({ legacy: true }),
      dispatched_at: new Date(),
    });
    const event = await db()('outbox_events').where({ id: eventId }).first();
    const deliveryId = newId('webhookDelivery');
    await db()('webhook_deliveries').insert({
      id: deliveryId,
      workspace_id: w.workspace.id,
      endpoint_id: e.id,
      event_id: eventId,
      event_type: 'post.updated',
      event_created_at: event.created_at,
      status: 'pending',
    });
    const temporal = await temporalClient();
    const old = await temporal.workflow.start(deliverWebhookWorkflow, {
      taskQueue: worker.taskQueue,
      workflowId: workflowIds.webhookDelivery(eventId, e.id),
      args: [{ deliveryId, eventId, endpointId: e.id, retry: { baseMs: 200, maxAttempts: 3 } }],
    });
    const result = await old.result();
    assert.equal(result.outcome, 'failed');
    assert.match((result as { reason: string }).reason, /^handed_over: webhook-endpoint-/);
    const [d] = await terminal(e.id, 1);
    assert.equal(d.status, 'delivered');
    assert.equal(d.attempt_count, 1);
    await sleep(300);
    assert.equal(r.received.length, 1, 'sent once, by the endpoint workflow');
    assert.equal(r.received[0]!.headers['webhook-id'], eventId);
    assert.equal(r.received[0]!.headers['webhook-attempt'], '1');
  });

  it('disables an endpoint after five permanently failed deliveries, counted across concurrent events; PATCH recovers it', async () => {
    const { w, endpoint, manage } = await workspace();
    const r = await rx(answer(500));
    const e = await endpoint({ url: r.url, events: ['post.updated'] });
    await Promise.all(Array.from({ length: 7 }, (_, i) => emit(w.workspace.id, 'post.updated', { i })));
    const rows = await terminal(e.id, 7, 60_000);
    assert.ok(rows.every((d: { status: string }) => d.status === 'failed'));
    const exhausted = rows.filter((d: { failure_reason: string }) => d.failure_reason.startsWith('retries_exhausted'));
    const inactive = rows.filter((d: { failure_reason: string }) => d.failure_reason.startsWith('endpoint_inactive'));
    assert.equal(exhausted.length + inactive.length, 7);
    assert.ok(exhausted.length >= 5, `${exhausted.length} exhausted`);
    assert.match(exhausted[0].failure_reason, /^retries_exhausted: 3 attempts failed; last: http_status: HTTP 500$/);

    const row = await endpointRow(e.id);
    assert.equal(row.is_active, false);
    // Every permanent failure added exactly one, however the concurrent updates interleaved.
    assert.equal(row.consecutive_failures, exhausted.length);
    const shown = (await manage('GET', `/v1/webhook-endpoints/${e.id}`)).body.data;
    assert.equal(shown.isActive, false);
    assert.match(shown.disabledReason, /^repeated_failures/);

    // spec 3.5: events for the inactive endpoint are recorded as permanently failed, never sent.
    const seen = r.received.length;
    const late = await emit(w.workspace.id, 'post.updated', { late: true });
    const lateDelivery = await waitFor(
      async () => (await db()('webhook_deliveries').where({ event_id: late, endpoint_id: e.id }).first()) ?? false,
      20_000,
      'the late delivery row',
    );
    assert.equal(lateDelivery.status, 'failed');
    assert.match(lateDelivery.failure_reason, /^endpoint_inactive: repeated_failures/);
    assert.equal(lateDelivery.attempt_count, 0);
    // The relay decided in the transaction that wrote the row: no delivery workflow was started,
    // so nothing can send it later (instead of waiting a while to see nothing arrive).
    const never = await (
      await temporalClient()
    ).workflow
      .getHandle(workflowIds.webhookDelivery(late, e.id))
      .describe()
      .then(
        () => null,
        (err: unknown) => err,
      );
    assert.ok(never instanceof WorkflowNotFoundError, `a delivery workflow exists for the inactive endpoint: ${String(never)}`);
    assert.equal(r.received.length, seen);

    // spec 6 rule 5: fix the receiver, set isActive true; the streak starts over.
    r.behave(answer(200));
    const on = await manage('PATCH', `/v1/webhook-endpoints/${e.id}`, { body: { isActive: true } });
    assert.equal(on.body.data.isActive, true);
    assert.equal(on.body.data.disabledReason, null);
    assert.equal(on.body.data.consecutiveFailures, 0);
    const fresh = await emit(w.workspace.id, 'post.updated', { fresh: true });
    const ok = await waitFor(
      async () => {
        const d = await db()('webhook_deliveries').where({ event_id: fresh, endpoint_id: e.id }).first();
        return d?.status === 'delivered' && d;
      },
      20_000,
      'delivery after recovery',
    );
    assert.equal(ok.attempt_count, 1);
    await record(workflowIds.webhookEndpoint(e.id), 'webhookEndpoint-disabled-then-recovered');
  });

  it('resets the streak on a success', async () => {
    const { w, endpoint } = await workspace();
    const r = await rx();
    const e = await endpoint({ url: r.url, events: ['post.scheduled'] });
    await db()('webhook_endpoints').where({ id: e.id }).update({ consecutive_failures: 4 });
    await emit(w.workspace.id, 'post.scheduled', {});
    await terminal(e.id, 1);
    assert.equal((await endpointRow(e.id)).consecutive_failures, 0);
  });

  it('ends a waiting delivery as failed when its endpoint is deleted', async () => {
    const { w, endpoint, manage } = await workspace();
    const r = await rx(answer(500));
    const e = await endpoint({ url: r.url, events: ['post.unscheduled'] });
    await emit(w.workspace.id, 'post.unscheduled', {});
    await waitFor(async () => r.received.length >= 1, 20_000, 'first attempt');
    assert.equal((await manage('DELETE', `/v1/webhook-endpoints/${e.id}`)).status, 200);
    const [d] = await terminal(e.id, 1);
    assert.equal(d.status, 'failed');
    assert.match(d.failure_reason, /^endpoint_deleted/);
    assert.equal(r.received.length, 1);
    await record(workflowIds.webhookEndpoint(e.id), 'webhookEndpoint-endpoint-deleted');
  });

  it('records a receiver that hangs past the timeout as a timed-out attempt', async () => {
    const { w, endpoint, manage } = await workspace();
    const r = await rx(() => {
      /* never answers */
    });
    const e = await endpoint({ url: r.url, events: ['post.published'] });
    await emit(w.workspace.id, 'post.published', {});
    const [d] = await terminal(e.id, 1, 30_000);
    assert.equal(d.status, 'failed');
    const attempts = (await manage('GET', `/v1/webhook-endpoints/${e.id}/deliveries`)).body.data[0].attempts;
    assert.equal(attempts.length, 3);
    for (const a of attempts) {
      assert.match(a.error, /^timeout: no response within 1000 ms/);
      assert.equal(a.statusCode, null);
      assert.ok(a.durationMs >= 950 && a.durationMs < 2_000, String(a.durationMs));
    }
  });

  it('starts each (event, endpoint) exactly once with several relays competing', async () => {
    const { w, endpoint } = await workspace();
    const [a, b] = [await rx(), await rx()];
    const ea = await endpoint({ url: a.url, events: ['post.updated'] });
    const eb = await endpoint({ url: b.url, events: ['post.updated'] });
    const temporal = await temporalClient();
    const extra = [`${worker.relayId}-2`, `${worker.relayId}-3`];
    for (const id of extra)
      await temporal.workflow.start(webhookRelayWorkflow, { taskQueue: worker.taskQueue, workflowId: id, args: [{ runMs: 5_000 }] });
    try {
      const N = 150;
      for (let i = 0; i < N; i += 25)
        await Promise.all(Array.from({ length: 25 }, (_, j) => emit(w.workspace.id, 'post.updated', { n: i + j })));
      await terminal(ea.id, N, 60_000);
      await terminal(eb.id, N, 60_000);
      await sleep(1_000);
      for (const [r, e] of [
        [a, ea],
        [b, eb],
      ] as const) {
        const ids = r.received.map((x) => x.json.id);
        assert.equal(new Set(ids).size, N, 'no event lost');
        // Competing relays never start a pair twice.
        await assertDuplicatesAreRetries(e.id, ids.length, N);
        const starts = await db()('webhook_deliveries').where({ endpoint_id: e.id }).count({ n: '*' }).first();
        assert.equal(Number(starts!.n), N, 'one delivery per (event, endpoint)');
      }
      const undispatched = await db()('outbox_events')
        .where({ workspace_id: w.workspace.id })
        .whereNull('dispatched_at')
        .count({ n: '*' })
        .first();
      assert.equal(Number(undispatched!.n), 0);
    } finally {
      for (const id of extra) await stopRelay(id);
    }
  });

  describe('with the loopback allowance off', () => {
    let strict: WebhookWorker;
    before(async () => {
      // The running relay would otherwise pick the events up for the permissive worker.
      await worker.stop();
      strict = await startWebhookWorker({ ...RETRY, allowLoopback: false, maxAttempts: 2 });
    });
    after(async () => {
      await strict.stop();
      worker = await startWebhookWorker(RETRY);
    });

    it('refuses a loopback receiver at every attempt and counts the delivery toward the streak', async () => {
      const { w, endpoint, manage } = await workspace();
      const r = await rx();
      const e = await endpoint({ url: r.url, events: ['post.updated'] });
      await emit(w.workspace.id, 'post.updated', {});
      const [d] = await terminal(e.id, 1);
      assert.equal(d.status, 'failed');
      assert.match(d.failure_reason, /^retries_exhausted: 2 attempts failed; last: address_refused: 127\.0\.0\.1/);
      assert.equal(r.received.length, 0, 'nothing reached the receiver');
      const attempts = (await manage('GET', `/v1/webhook-endpoints/${e.id}/deliveries`)).body.data[0].attempts;
      assert.deepEqual(
        attempts.map((a: { outcome: string }) => a.outcome),
        ['refused', 'refused'],
      );
      assert.equal((await endpointRow(e.id)).consecutive_failures, 1, 'spec 6 rule 3: a failed SSRF check counts');
      await record(workflowIds.webhookEndpoint(e.id), 'webhookEndpoint-refused-loopback');
    });
  });
});
