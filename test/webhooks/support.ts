import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookActivities, type WebhookOptions } from '../../activities/webhooks';
import { db } from '../../lib/db';
import { randomBase62 } from '../../lib/ids';
import { emitEvent, type EventType } from '../../lib/outbox';
import { temporalClient } from '../../lib/temporal/client';
import { webhookRelayWorkflow } from '../../workflows/webhookRelay';
import { testWorker } from '../support/worker';
export { waitFor } from '../support/wait';
export { setTimeout as sleep } from 'node:timers/promises';

// Fixtures of the webhook suites: real receivers on 127.0.0.1, an in-process worker with its
// own task queue and outbox relay (OAuth tokens: test/oauth/support.ts oauthToken).

export interface Received {
  body: string;
  json: any;
  headers: IncomingHttpHeaders;
  at: number;
  remotePort: number | undefined;
}

export type Behaviour = (req: IncomingMessage, res: ServerResponse, n: number) => void;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Changes how the next requests are answered; `n` counts requests from 1. */
  behave(b: Behaviour): void;
  close(): Promise<void>;
}

export const answer =
  (status: number): Behaviour =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'text/plain' }).end(String(status));
  };

/** A real node:http receiver on 127.0.0.1 that records every request it reads in full. */
export async function receiver(behaviour: Behaviour = answer(200), host = '127.0.0.1'): Promise<Receiver> {
  const received: Received[] = [];
  let b = behaviour;
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        /* recorded as text */
      }
      received.push({ body, json, headers: req.headers, at: Date.now(), remotePort: req.socket.remotePort });
      b(req, res, ++n);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/hooks`,
    port,
    received,
    behave(next) {
      b = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface WebhookWorker {
  taskQueue: string;
  relayId: string;
  stop(): Promise<void>;
}

/**
 * An in-process worker on a fresh task queue whose webhook activities use `options`, with an
 * outbox relay workflow of its own on that queue (delivery workflows start where the relay runs).
 */
export async function startWebhookWorker(options: Partial<WebhookOptions> = {}): Promise<WebhookWorker> {
  const taskQueue = `webhooks-${randomBase62(10)}`;
  const worker = testWorker({ taskQueue });
  await worker.start(createWebhookActivities({ db: db(), temporal: temporalClient }, options));
  const client = await temporalClient();
  const relayId = `webhook-outbox-relay-${taskQueue}`;
  await client.workflow.start(webhookRelayWorkflow, { taskQueue, workflowId: relayId, args: [{ runMs: 5_000 }] });
  return {
    taskQueue,
    relayId,
    async stop() {
      await stopRelay(relayId);
      await worker.stop();
    },
  };
}

/** Cancels a relay workflow and waits until its running activity has stopped. */
export async function stopRelay(workflowId: string): Promise<void> {
  const handle = (await temporalClient()).workflow.getHandle(workflowId);
  await handle.cancel().catch(() => undefined);
  await handle.result().catch(() => undefined);
}

export async function emit(
  workspaceId: string,
  type: EventType,
  data: Record<string, unknown> = {},
  projectId: string | null = null,
): Promise<string> {
  return emitEvent(db(), { workspaceId, projectId, type, data });
}

export async function deliveriesOf(endpointId: string) {
  return db()('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('created_at');
}

export async function endpointRow(endpointId: string) {
  return db()('webhook_endpoints').where({ id: endpointId }).first();
}
