import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { config } from './config';
import { randomBase62 } from './ids';

/** Keyed hash for stored secrets (spec 5.1: API keys stored as a keyed hash). */
export function keyedHash(value: string, purpose = 'api-key'): string {
  return createHmac('sha256', `${config.secretKey}:${purpose}`).update(value).digest('hex');
}

export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export function randomSecret(length = 40): string {
  return randomBase62(length);
}

const encKey = createHash('sha256').update(config.encryptionKey).digest();

/** AES-256-GCM for network tokens at rest: "v1.<iv>.<tag>.<ciphertext>" in base64url. */
export function encrypt(plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', encKey, iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

export function decrypt(sealed: string): string {
  const [version, iv, tag, ct] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unrecognised ciphertext');
  const decipher = createDecipheriv('aes-256-gcm', encKey, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

/** HMAC signature for opaque values we hand out and take back (pagination cursors). */
export function sign(value: string, purpose: string): string {
  return createHmac('sha256', `${config.secretKey}:${purpose}`).update(value).digest('base64url').slice(0, 22);
}
