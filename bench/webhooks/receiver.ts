import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhookSignature } from '../../sim/webhooks/verifier';

/** One request as a receiver read it: its path, event id and Webhook-Id, whether its signature verified, when it was read whole. */
export type Received = { path: string; eventId: string; webhookId: string; signatureOk: boolean; at: number };

// A customer's webhook receiver on loopback (the webhooks, soak and fairness benches'): reads each request whole, verifies its
// signature with its endpoint's secret apart from the service's signer (sim/webhooks/verifier.ts), answers `answer`'s status (204 if none).
export async function startReceiver(
  secretOf: (path: string) => string,
  answer: (r: Received) => number | void,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks);
      const path = (req.url ?? '').split('?')[0]!;
      let eventId = '';
      try {
        eventId = JSON.parse(body.toString('utf8')).id ?? '';
      } catch {
        /* recorded with an empty id: a violation */
      }
      const signatureOk = verifyWebhookSignature(body, req.headers['webhook-signature'] as string | undefined, secretOf(path), Infinity).ok;
      res.writeHead(answer({ path, eventId, webhookId: String(req.headers['webhook-id'] ?? ''), signatureOk, at }) ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}
