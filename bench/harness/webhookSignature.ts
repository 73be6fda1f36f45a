import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Whether a `webhook-signature` header (`t=<ts>,v1=<hex>[,v1=…]`) signs this body with this
 * secret, as a customer's receiver checks it: the benches' receivers verify what the service's
 * signer (lib/webhooks/signature.ts) made, independently of it.
 */
export function verifyWebhookSignature(body: Buffer, header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  return parts.some(([k, v]) => k === 'v1' && v !== undefined && v.length === 64 && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}
