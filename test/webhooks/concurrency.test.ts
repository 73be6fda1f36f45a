import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { db } from '../../lib/db';
import { emitEvent } from '../../lib/outbox';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { startOAuthApi } from '../oauth/support';
import { oauthToken } from '../oauth/support';
import { deliveriesOf, receiver, startWebhookWorker, waitFor, type Receiver, type WebhookWorker } from './support';

// WEBHOOK_ENDPOINT_CONCURRENCY (docs/webhooks.md, "Order"; docs/configuration.md): the endpoint
// workflow never has more than that many requests open to one receiver, and starts them in
// event order. Real Temporal, a real receiver that holds every request for a while and counts
// how many are open at once.

/** A receiver behaviour that answers 200 after `holdMs`, counting the requests open at once. */
function counting(holdMs: number) {
  const seen = { open: 0, max: 0, order: [] as number[] };
  const behaviour = (_req: IncomingMessage, res: ServerResponse) => {
    seen.open++;
    seen.max = Math.max(seen.max, seen.open);
    setTimeout(() => {
      seen.open--;
      res.writeHead(200).end('ok');
    }, holdMs);
  };
  return { seen, behaviour };
}

for (const limit of [3, 1]) {
  describe(`webhook delivery with WEBHOOK_ENDPOINT_CONCURRENCY=${limit}`, function () {
    this.timeout(120_000);
    let api: Awaited<ReturnType<typeof startOAuthApi>>;
    let worker: WebhookWorker;
    let rx: Receiver | undefined;

    before(async () => {
      api = await startOAuthApi();
      worker = await startWebhookWorker({
        allowLoopback: true,
        retryBaseMs: 200,
        maxAttempts: 3,
        timeoutMs: 5_000,
        endpointConcurrency: limit,
      });
    });
    after(async () => {
      await worker.stop();
      await rx?.close();
      api.restore();
      await api.close();
    });

    it(`keeps at most ${limit} request${limit === 1 ? '' : 's'} open to one receiver, started in event order`, async () => {
      const { seen, behaviour } = counting(150);
      rx = await receiver((req, res) => {
        seen.order.push(rx!.received.at(-1)!.json.data.n);
        behaviour(req, res);
      });
      const w = await workspaceWithKey({ projects: 1 });
      const manage = client(api.url, await oauthToken(api.url, w.workspace.id));
      const res = await manage('POST', '/v1/webhook-endpoints', { body: { url: rx.url, events: ['post.updated'] } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const endpointId = res.body.data.id as string;

      // One transaction: the relay claims all of them in one batch, so a single pass has every
      // delivery due at once and only the limit holds the requests back.
      const N = 12;
      await db().transaction(async (trx) => {
        for (let n = 0; n < N; n++) await emitEvent(trx, { workspaceId: w.workspace.id, type: 'post.updated', data: { n } });
      });
      await waitFor(
        async () => (await deliveriesOf(endpointId)).filter((d: { status: string }) => d.status === 'delivered').length === N,
        60_000,
        `${N} deliveries`,
      );

      assert.equal(rx.received.length, N, 'each event delivered once');
      // The limit is honoured and reached: with 12 deliveries due together and each request held
      // 150 ms, a pass that ran them one by one (or all at once) fails here.
      assert.equal(seen.max, limit, `at most ${limit} open at once (saw ${seen.max})`);
      if (limit === 1)
        assert.deepEqual(
          seen.order,
          Array.from({ length: N }, (_, n) => n),
          'one at a time arrives in event order',
        );
      else
        assert.deepEqual(
          [...seen.order].slice(0, limit).sort((a, b) => a - b),
          Array.from({ length: limit }, (_, n) => n),
        );
    });
  });
}
