import { createHmac, timingSafeEqual } from 'node:crypto';

// A customer's receiver's verifier of `Webhook-Signature: t=<unix seconds>,v1=<hex>`, as the
// tests and the benches' receivers check what the service signed: written from the scheme's
// description and independent of lib/webhooks/signature.ts: parse every element,
// recompute HMAC-SHA256 over "<t>.<raw body>" with the secret as UTF-8, accept when any v1
// matches in constant time and the timestamp is within the tolerance.

export type Verification = { ok: true; timestamp: number } | { ok: false; reason: string };

/** `toleranceSeconds: Infinity` checks the signature only (a bench's receiver of late retries). */
export function verifyWebhookSignature(
  rawBody: string | Buffer,
  header: string | undefined,
  secret: string,
  toleranceSeconds = 300,
  nowSeconds = Date.now() / 1000,
): Verification {
  if (!header) return { ok: false, reason: 'missing header' };
  let timestamp = NaN;
  const candidates: string[] = [];
  for (const element of header.split(',')) {
    const eq = element.indexOf('=');
    if (eq <= 0) continue;
    const key = element.slice(0, eq).trim();
    const value = element.slice(eq + 1).trim();
    if (key === 't') timestamp = Number(value);
    else if (key === 'v1') candidates.push(value);
  }
  if (!Number.isInteger(timestamp)) return { ok: false, reason: 'no timestamp' };
  if (candidates.length === 0) return { ok: false, reason: 'no v1 signature' };
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody, 'utf8')]));
  const expected = mac.digest();
  const matches = candidates.some((hex) => {
    if (!/^[0-9a-f]{64}$/.test(hex)) return false;
    return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
  });
  if (!matches) return { ok: false, reason: 'no matching signature' };
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return { ok: false, reason: 'timestamp outside tolerance' };
  return { ok: true, timestamp };
}
