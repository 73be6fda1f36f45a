import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { config } from '../../lib/config';
import { constantTimeEqual, sha256Hex, sign } from '../../lib/crypto';
import { redis } from '../../lib/redis';
import type { ResourceBinding } from './resources';

// The browser side of /authorize: a sign-in session and the pending authorization requests
// ("interactions") it is working through. Both live in Redis, which holds only what may be
// lost (ARCHITECTURE.md): losing them means signing in again.
//
// Cookie: one opaque session id plus its HMAC, HttpOnly (no script reads it), SameSite=Lax
// (not sent on cross-site POSTs, so a forged approval carries no session), Secure and with the
// __Host- prefix whenever the public origin is HTTPS. Every browser gets a session before it
// sees a form, so the login form is CSRF-protected too (no login CSRF); signing in replaces
// the session id (no fixation).

const ANONYMOUS_TTL_S = 3600;
const SIGNED_IN_TTL_S = 8 * 3600;
/** Long enough to read the consent page, short enough that an abandoned request goes away. */
export const INTERACTION_TTL_S = 15 * 60;

export interface Session {
  sid: string;
  userId: string | null;
}

export interface Interaction {
  uid: string;
  sid: string;
  clientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  /** Expanded, de-duplicated (spec 5.2 rule 4). */
  requestedScopes: string[];
  /** prompt=consent (OpenID Connect Core 3.1.2.1): show the consent page even when an approval is remembered. */
  forceConsent: boolean;
  /** RFC 8707: the resource the code will be bound to; null (or absent, in interactions stored before) = both. */
  resource?: ResourceBinding;
}

function secureOrigin(): boolean {
  return config.publicUrl.startsWith('https:');
}

function cookieName(): string {
  return secureOrigin() ? '__Host-svc_oauth_session' : 'svc_oauth_session';
}

function setCookie(ctx: Context, value: string, maxAgeS: number): void {
  // Written by hand: Koa refuses `secure` cookies when TLS ends at a proxy it was not told to trust.
  const parts = [`${cookieName()}=${value}`, 'Path=/', `Max-Age=${maxAgeS}`, 'HttpOnly', 'SameSite=Lax'];
  if (secureOrigin()) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

// Keyed by a digest: a copy of Redis does not hand out live sessions.
const sessionKey = (sid: string) => `oauth:session:${sha256Hex(sid)}`;
const interactionKey = (uid: string) => `oauth:interaction:${uid}`;

function newSid(): string {
  return randomBytes(24).toString('base64url');
}

function cookieValue(sid: string): string {
  return `${sid}.${sign(sid, 'oauth-session')}`;
}

export async function currentSession(ctx: Context): Promise<Session | null> {
  const raw = ctx.cookies.get(cookieName());
  if (!raw) return null;
  const [sid, sig] = raw.split('.');
  if (!sid || !sig || !constantTimeEqual(sig, sign(sid, 'oauth-session'))) return null;
  const stored = await redis().get(sessionKey(sid));
  if (!stored) return null;
  const { userId } = JSON.parse(stored) as { userId: string | null };
  return { sid, userId };
}

async function startSession(ctx: Context, userId: string | null): Promise<Session> {
  const sid = newSid();
  const ttl = userId ? SIGNED_IN_TTL_S : ANONYMOUS_TTL_S;
  await redis().set(sessionKey(sid), JSON.stringify({ userId, at: Date.now() }), 'EX', ttl);
  setCookie(ctx, cookieValue(sid), ttl);
  return { sid, userId };
}

export async function ensureSession(ctx: Context): Promise<Session> {
  return (await currentSession(ctx)) ?? startSession(ctx, null);
}

/** A fresh session id on every change of identity; the interaction follows the browser. */
export async function switchUser(ctx: Context, old: Session, userId: string | null, ix: Interaction): Promise<Session> {
  await redis().del(sessionKey(old.sid));
  const next = await startSession(ctx, userId);
  await saveInteraction({ ...ix, sid: next.sid });
  return next;
}

export async function createInteraction(data: Omit<Interaction, 'uid'>): Promise<Interaction> {
  const ix = { uid: randomBytes(16).toString('base64url'), ...data };
  await saveInteraction(ix);
  return ix;
}

async function saveInteraction(ix: Interaction): Promise<void> {
  await redis().set(interactionKey(ix.uid), JSON.stringify(ix), 'EX', INTERACTION_TTL_S);
}

export async function loadInteraction(uid: string): Promise<Interaction | null> {
  if (!/^[A-Za-z0-9_-]{10,40}$/.test(uid)) return null;
  const stored = await redis().get(interactionKey(uid));
  return stored ? (JSON.parse(stored) as Interaction) : null;
}

/** Single use: the first approval or refusal ends the interaction. */
export async function finishInteraction(uid: string): Promise<boolean> {
  return (await redis().del(interactionKey(uid))) === 1;
}

/** Synchroniser token bound to both the session and the interaction. */
export function csrfToken(session: Session, uid: string): string {
  return sign(`${session.sid}:${uid}`, 'oauth-csrf');
}

export function csrfValid(session: Session, uid: string, presented: string | undefined): boolean {
  return typeof presented === 'string' && constantTimeEqual(presented, csrfToken(session, uid));
}
