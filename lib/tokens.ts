import { createHash, createHmac, hkdfSync, webcrypto } from 'node:crypto';
import { errors as jose, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { config } from './config';

// Every token the service mints and later takes back (pagination cursors, delete confirmations;
// the upload URLs and consent tokens to come) is a compact JWS (RFC 7515, RFC 7519 claims)
// signed with HS256. Each purpose has its own key, derived from SECRET_KEY with HKDF (RFC 5869),
// and its own `typ` header, so a token minted for one purpose never verifies as another, and
// rotating SECRET_KEY voids them all. Tokens are opaque to clients: only this module reads them.

export type TokenPurpose = 'cursor' | 'post-delete-confirmation';

const ALG = 'HS256';
const keys = new Map<TokenPurpose, Promise<webcrypto.CryptoKey>>();

/**
 * The purpose's HMAC key, imported into WebCrypto once: jose signs and verifies through
 * WebCrypto, and handing it raw bytes would import the key again for every token (a page of a
 * list mints one cursor per request; bench/posts-list.ts).
 */
function keyFor(purpose: TokenPurpose): Promise<webcrypto.CryptoKey> {
  let key = keys.get(purpose);
  if (!key) {
    key = webcrypto.subtle.importKey('raw', new Uint8Array(rawKeyFor(purpose)), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ]);
    keys.set(purpose, key);
  }
  return key;
}

const rawKeys = new Map<TokenPurpose, Buffer>();

function rawKeyFor(purpose: TokenPurpose): Buffer {
  let key = rawKeys.get(purpose);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', config.secretKey, 'content-scheduler signed tokens', purpose, 32));
    rawKeys.set(purpose, key);
  }
  return key;
}

async function mint(purpose: TokenPurpose, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: ALG, typ: purpose }).sign(await keyFor(purpose));
}

/**
 * The compact JWS jose's SignJWT makes for `claims` (RFC 7515 7.1: the base64url protected
 * header and payload, then the HS256 MAC over both), byte for byte (test/unit/tokens.test.ts),
 * computed synchronously with node:crypto. For the token of every list page: WebCrypto's
 * asynchronous HMAC behind jose cost about 60 µs of CPU and an extra turn of the event loop per
 * page (bench/README.md, posts-list profile of 26 November 2026); this costs a few µs. Tokens
 * are read back by jose (`read`), which checks header, algorithm and claims.
 */
function mintSync(purpose: TokenPurpose, claims: JWTPayload): string {
  const signingInput = `${b64url(JSON.stringify({ alg: ALG, typ: purpose }))}.${b64url(JSON.stringify(claims))}`;
  return `${signingInput}.${createHmac('sha256', rawKeyFor(purpose)).update(signingInput).digest('base64url')}`;
}

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/**
 * The claims of a token of `purpose` whose signature holds, or null. An expired token still
 * answers its claims with `expired: true`, so a caller can tell "expired" from "not ours".
 */
async function read(purpose: TokenPurpose, token: string): Promise<{ claims: JWTPayload; expired: boolean } | null> {
  try {
    const { payload } = await jwtVerify(token, await keyFor(purpose), { algorithms: [ALG], typ: purpose });
    return { claims: payload, expired: false };
  } catch (err) {
    // jose checks the signature before the claims: a JWTExpired token is authentic.
    if (err instanceof jose.JWTExpired) return { claims: err.payload, expired: true };
    return null;
  }
}

// --- Pagination cursors (spec 2.1 / 4.4) ----------------------------------------------------

export interface CursorPosition {
  createdAt: string;
  id: string;
}

/** A digest of the filters a cursor was minted under; undefined and null filters are absent. */
function filterDigest(filters: Record<string, unknown>): string {
  const keys = Object.keys(filters)
    .filter((k) => filters[k] !== undefined && filters[k] !== null)
    .sort();
  const canonical = JSON.stringify(keys.map((k) => [k, filters[k]]));
  return createHash('sha256').update(canonical).digest().subarray(0, 16).toString('base64url');
}

export function mintCursor(pos: CursorPosition, filters: Record<string, unknown>): string {
  return mintSync('cursor', { c: pos.createdAt, i: pos.id, f: filterDigest(filters) });
}

/** The position of a cursor minted under exactly these filters, else null. */
export async function readCursor(cursor: string, filters: Record<string, unknown>): Promise<CursorPosition | null> {
  const claims = await cursorClaims(cursor, filters);
  const c = claims?.c;
  if (!claims || typeof c !== 'string' || Number.isNaN(Date.parse(c))) return null;
  return { createdAt: c, id: claims.i };
}

/** A position in a list sorted by another key than created_at: the row's sort value, then its id. */
export interface SortPosition {
  value: string | number;
  id: string;
}

export function mintSortCursor(pos: SortPosition, filters: Record<string, unknown>): string {
  return mintSync('cursor', { v: pos.value, i: pos.id, f: filterDigest(filters) });
}

/** The position of a sort cursor minted under exactly these filters, else null. */
export async function readSortCursor(cursor: string, filters: Record<string, unknown>): Promise<SortPosition | null> {
  const claims = await cursorClaims(cursor, filters);
  const v = claims?.v;
  if (!claims || (typeof v !== 'string' && typeof v !== 'number')) return null;
  return { value: v, id: claims.i };
}

/** The claims of an authentic, unexpired cursor minted under these filters, with its row id. */
async function cursorClaims(cursor: string, filters: Record<string, unknown>): Promise<(JWTPayload & { i: string }) | null> {
  const verified = await read('cursor', cursor);
  if (!verified || verified.expired) return null;
  const { i, f } = verified.claims;
  if (f !== filterDigest(filters) || typeof i !== 'string') return null;
  return { ...verified.claims, i };
}

// --- Delete confirmations (spec 4.9 delete_post) --------------------------------------------

const CONFIRMATION_PREFIX = 'pdc1';

export interface DeleteConfirmation {
  postId: string;
  workspaceId: string;
  principalId: string;
  status: string;
  scheduleVersion: number;
  /** Milliseconds since the epoch, on a whole second (the token's `exp`). */
  expiresAt: number;
}

/** A confirmation for `claims` valid `ttlMs` from now (rounded down to the second). */
export async function mintDeleteConfirmation(
  claims: Omit<DeleteConfirmation, 'expiresAt'>,
  ttlMs: number,
): Promise<{ token: string; expiresAt: Date }> {
  const exp = Math.floor((Date.now() + ttlMs) / 1000);
  const jws = await mint('post-delete-confirmation', {
    sub: claims.postId,
    wid: claims.workspaceId,
    prn: claims.principalId,
    st: claims.status,
    sv: claims.scheduleVersion,
    exp,
  });
  return { token: `${CONFIRMATION_PREFIX}.${jws}`, expiresAt: new Date(exp * 1000) };
}

/** The claims of an authentic confirmation, expired or not (the caller decides when expiry matters); else null. */
export async function readDeleteConfirmation(token: string): Promise<DeleteConfirmation | null> {
  const prefix = `${CONFIRMATION_PREFIX}.`;
  if (!token.startsWith(prefix)) return null;
  const verified = await read('post-delete-confirmation', token.slice(prefix.length));
  if (!verified) return null;
  const { sub, wid, prn, st, sv, exp } = verified.claims;
  if (typeof sub !== 'string' || typeof wid !== 'string' || typeof prn !== 'string' || typeof st !== 'string') return null;
  if (typeof sv !== 'number' || typeof exp !== 'number') return null;
  return { postId: sub, workspaceId: wid, principalId: prn, status: st, scheduleVersion: sv, expiresAt: exp * 1000 };
}
