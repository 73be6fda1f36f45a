import { createHmac } from 'node:crypto';
import { randomSecret } from '../crypto';

// spec 6 rule 1: `Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over "<t>.<raw body>",
// keyed with the endpoint's signing secret taken as UTF-8 text. This is the widely used
// timestamped scheme (the one Stripe's libraries verify), so receivers can use an existing
// verifier: parse `t` and every `v1`, recompute, compare in constant time, bound the age of `t`.
// During a rotation overlap the header carries one `v1` per live secret, newest first.

export const SIGNATURE_HEADER = 'Webhook-Signature';
export const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return SECRET_PREFIX + randomSecret(40);
}

export function computeSignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${computeSignature(s, timestamp, body)}`)].join(',');
}
