import type { Knex } from 'knex';
import type { NetworkClient } from '../network/client';
import { config } from '../config';
import { isNetworkError, type NetworkError, type NetworkErrorCode } from '../network/errors';
import { TokenUnavailable, usableAccessToken } from './tokens';

// The connection probe and the one failure-streak rule (spec 2.6 "degraded: recent network
// calls failed (3 consecutive failures revoke the connection)", spec 3.4). Every door that talks
// to the network on a connection's behalf reports the call here: PATCH scheduling verification
// (api/operations/posts/scheduling.ts), the health workflow's check and the publish activity
// (activities/publishing.ts), engagement (activities/engagement.ts), the metrics sync
// (lib/analytics/sync.ts) and the viral search (api/operations/analytics/analytics.ts). The
// writers of the streak are private to this module, so no door can go around the rule.
// docs/publishing.md "The failure streak" states the rule and why.

/**
 * Which call the outcome is of: the rule reads a refusal differently for each. `read` is a call
 * that reads for the account (post metrics, viral search): like a publish, a permanent refusal
 * of what was asked (a post gone, 404) says nothing about the connection.
 */
export type CallKind = 'refresh' | 'probe' | 'publish' | 'read';

/** What the streak does with one call. `outage` leaves the streak alone but shows the failure. */
export type StreakEffect =
  | { effect: 'reset' }
  | { effect: 'count'; error: string }
  | { effect: 'revoke'; error: string }
  | { effect: 'outage'; error: NetworkErrorCode }
  | { effect: 'none' };

/** An answer that is a success on the wire but says the connection cannot publish. */
export class EmptyAdminSet extends Error {
  constructor() {
    super('The company page has no administrator left on the network.');
  }
}

/**
 * The rule. `outcome` is `'ok'` for a call the network answered with success, or what the call
 * threw.
 *
 * 1. success → reset: the streak goes to 0, `lastValidatedAt` is stamped;
 * 2. the network refused the credentials (auth: invalid, expired or revoked access token) → count;
 *    so do a probe the network refuses permanently (the account cannot read itself or the page)
 *    and a company page whose admin set is empty; the third consecutive count revokes;
 * 3. a token refresh the network refuses permanently → revoke at once: the access token has
 *    lapsed and the grant that would renew it is gone, so no later call can succeed;
 * 4. transient failures (timeout, connection error, 429, 5xx, an unreadable answer) → outage:
 *    the streak neither counts nor resets, since they say nothing about this account, and
 *    counting them would let one network outage revoke every connection at once, which
 *    reconnecting cannot fix (retries and the publish retry window handle them); but spec 2.6
 *    `degraded` means "recent network calls failed", so the connection reads `degraded`, naming
 *    the outage, until the next success;
 * 5. the network refusing the post itself (createPost: too long, duplicate, forbidden content)
 *    → none: the request was wrong, not the connection;
 * 6. no call made (no token on file, stored revoked, lapsed without a refresh token) → none.
 *
 * Anything else (a bug, the database) is not an outcome of the network: the caller rethrows it.
 */
export function streakEffect(kind: CallKind, outcome: 'ok' | unknown): StreakEffect {
  if (outcome === 'ok') return { effect: 'reset' };
  if (outcome instanceof EmptyAdminSet) return { effect: 'count', error: 'no_admins' };
  if (outcome instanceof TokenUnavailable) {
    return outcome.reason === 'refresh_failed' ? { effect: 'revoke', error: outcome.message } : { effect: 'none' };
  }
  if (!isNetworkError(outcome)) return { effect: 'none' };
  if (outcome.kind === 'transient') return { effect: 'outage', error: outcome.code };
  if (kind === 'refresh') return { effect: 'revoke', error: outcome.code };
  if (outcome.kind === 'auth') return { effect: 'count', error: outcome.code };
  return kind === 'probe' ? { effect: 'count', error: outcome.code } : { effect: 'none' };
}

export interface StreakAfter {
  failures: number | null;
  revoked: boolean;
}

/** Applies the rule to the connection row (atomic under concurrency, see ./tokens.ts). */
export async function recordCall(
  trx: Knex | Knex.Transaction,
  connectionId: string,
  kind: CallKind,
  outcome: 'ok' | unknown,
): Promise<StreakAfter> {
  const e = streakEffect(kind, outcome);
  switch (e.effect) {
    case 'reset':
      await recordConnectionSuccess(trx, connectionId);
      return { failures: 0, revoked: false };
    case 'count':
    case 'revoke':
      return recordConnectionFailure(trx, connectionId, e.error, { revokeNow: e.effect === 'revoke' });
    case 'outage':
      await recordConnectionOutage(trx, connectionId, e.error);
      return { failures: null, revoked: false };
    case 'none':
      return { failures: null, revoked: false };
  }
}

// The three writers of the streak. Only recordCall calls them: the rule decides which applies.

/** Rule 1: the streak goes to 0, `CONNECTED`, `lastValidatedAt` stamped; an outage shown is cleared. */
async function recordConnectionSuccess(trx: Knex | Knex.Transaction, connectionId: string): Promise<void> {
  // Only rows with something to change are written (and locked): a burst of posts of one
  // account must not queue on its connection row.
  await trx('network_connections')
    .where({ id: connectionId })
    .whereNot('connection_status', 'REVOKED')
    .andWhere((q) =>
      q
        .where('consecutive_failures', '>', 0)
        .orWhereNot('connection_status', 'CONNECTED')
        .orWhereNull('last_validated_at')
        .orWhereRaw(`last_validated_at < now() - interval '1 minute'`),
    )
    .update({
      consecutive_failures: 0,
      connection_status: 'CONNECTED',
      last_validated_at: trx.fn.now(),
      last_error: null,
      updated_at: trx.fn.now(),
    });
}

/** Rules 2 and 3: one more consecutive failure; the third (or `revokeNow`) revokes. Atomic under concurrency. */
async function recordConnectionFailure(
  trx: Knex | Knex.Transaction,
  connectionId: string,
  error: string,
  opts: { revokeNow?: boolean } = {},
): Promise<{ failures: number; revoked: boolean }> {
  const threshold = config.network.revokeAfterFailures;
  const rows = await trx.raw(
    `update network_connections set
       consecutive_failures = consecutive_failures + 1,
       last_failure_at = now(), last_error = ?, updated_at = now(),
       connection_status = case when ? or consecutive_failures + 1 >= ? then 'REVOKED' else 'DEGRADED' end,
       revoked_at = case when ? or consecutive_failures + 1 >= ? then coalesce(revoked_at, now()) else revoked_at end
     where id = ? returning consecutive_failures, connection_status`,
    [error.slice(0, 500), !!opts.revokeNow, threshold, !!opts.revokeNow, threshold, connectionId],
  );
  const r = rows.rows[0];
  return { failures: r?.consecutive_failures ?? 0, revoked: r?.connection_status === 'REVOKED' };
}

/**
 * Rule 4: `DEGRADED` with the outage's code in `last_error` (lib/connectionState.ts turns it into
 * the block's `detail`), the streak untouched. A revoked row stays revoked. Like a success, it
 * writes only when something changes, so an outage does not queue every publish on the row.
 */
async function recordConnectionOutage(trx: Knex | Knex.Transaction, connectionId: string, code: NetworkErrorCode): Promise<void> {
  await trx('network_connections')
    .where({ id: connectionId })
    .whereNot('connection_status', 'REVOKED')
    .whereNull('revoked_at')
    .andWhere((q) =>
      q
        .whereNot('connection_status', 'DEGRADED')
        .orWhereRaw('last_error is distinct from ?', [code])
        .orWhereNull('last_failure_at')
        .orWhereRaw(`last_failure_at < now() - interval '1 minute'`),
    )
    .update({ connection_status: 'DEGRADED', last_error: code, last_failure_at: trx.fn.now(), updated_at: trx.fn.now() });
}

export type TokenStep =
  { ok: true; token: string; personId: string | null } | { ok: false; failure: TokenUnavailable | NetworkError; after: StreakAfter };

/**
 * The first step of every door: a usable access token (refreshed when it lapses within five
 * minutes, see ./tokens.ts), a refusal reported to the streak as a `refresh` call. Throws only
 * what is not a network outcome.
 */
export async function connectionToken(trx: Knex.Transaction, network: NetworkClient, connectionId: string): Promise<TokenStep> {
  try {
    const { token, connection } = await usableAccessToken(trx, network, connectionId);
    return { ok: true, token, personId: connection.network_person_id };
  } catch (err) {
    if (!(err instanceof TokenUnavailable) && !isNetworkError(err)) throw err;
    return { ok: false, failure: err, after: await recordCall(trx, connectionId, 'refresh', err) };
  }
}

export interface ProbeTarget {
  connectionId: string;
  type: string;
  organizationId: string | null;
}

export type ProbeResult =
  | { ok: true; token: string }
  | {
      ok: false;
      /** `no_token`, `revoked`, `expired`, `token_refresh_failed`, `no_admins` or the network's error code. */
      reason: 'no_token' | 'revoked' | 'expired' | 'token_refresh_failed' | 'no_admins' | NetworkErrorCode;
      /** A transient failure: nothing is known about the account (rule 4). */
      transient: boolean;
      /** The streak after this probe; null when it did not move. */
      failures: number | null;
      revoked: boolean;
    };

/**
 * One live check of a connection inside `trx` (which then holds the connection row lock if a
 * refresh was due): a usable token (refreshed when it lapses within five minutes), then the
 * identity of a personal account, or a non-empty admin set for a company page. Records the
 * outcome by the rule above. Throws only what is not a network outcome.
 */
export async function probeConnection(trx: Knex.Transaction, network: NetworkClient, target: ProbeTarget): Promise<ProbeResult> {
  const step = await connectionToken(trx, network, target.connectionId);
  if (!step.ok) {
    const { failure: err, after } = step;
    if (err instanceof TokenUnavailable)
      return { ok: false, reason: err.reason === 'refresh_failed' ? 'token_refresh_failed' : err.reason, transient: false, ...after };
    return { ok: false, reason: err.code, transient: err.kind === 'transient', ...after };
  }
  const { token } = step;
  try {
    if (target.type === 'COMPANY_PAGE') {
      const admins = await network.listOrganizationAdmins(token, target.organizationId ?? '');
      if (admins.length === 0) throw new EmptyAdminSet();
    } else {
      await network.getIdentity(token);
    }
  } catch (err) {
    if (!(err instanceof EmptyAdminSet) && !isNetworkError(err)) throw err;
    const after = await recordCall(trx, target.connectionId, 'probe', err);
    if (err instanceof EmptyAdminSet) return { ok: false, reason: 'no_admins', transient: false, ...after };
    return { ok: false, reason: err.code, transient: err.kind === 'transient', ...after };
  }
  await recordCall(trx, target.connectionId, 'probe', 'ok');
  return { ok: true, token };
}
