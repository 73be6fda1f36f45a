import type { Knex } from 'knex';
import { decrypt, encrypt } from '../crypto';
import type { NetworkClient } from '../network/client';
import { isNetworkError } from '../network/errors';

// Network access tokens: refreshed under a row lock on the connection, so two processes
// never spend the same (rotating) refresh token twice.

const REFRESH_MARGIN_MS = 5 * 60_000;

export interface ConnectionRow {
  id: string;
  workspace_id: string;
  network_person_id: string | null;
  access_token_enc: string | null;
  refresh_token_enc: string | null;
  access_token_expires_at: Date | null;
  connection_status: string;
  consecutive_failures: number;
  revoked_at: Date | null;
}

export class TokenUnavailable extends Error {
  constructor(
    readonly reason: 'no_token' | 'revoked' | 'refresh_failed' | 'expired',
    message: string,
  ) {
    super(message);
  }
}

/**
 * A usable access token for the connection, refreshing it first when it lapses within five
 * minutes (or `force`). Runs inside `trx`, which holds the connection row lock until commit.
 */
export async function usableAccessToken(
  trx: Knex.Transaction,
  network: NetworkClient,
  connectionId: string,
  opts: { force?: boolean } = {},
): Promise<{ token: string; connection: ConnectionRow }> {
  // The common case reads without a lock: many posts of one account publish at once.
  let conn = (await trx('network_connections').where({ id: connectionId }).first()) as ConnectionRow | undefined;
  const lapsing = (c: ConnectionRow) => !c.access_token_expires_at || c.access_token_expires_at.getTime() - Date.now() < REFRESH_MARGIN_MS;
  const check = (c: ConnectionRow | undefined): ConnectionRow => {
    if (!c || !c.access_token_enc) throw new TokenUnavailable('no_token', 'No network token is on file for this account.');
    if (c.connection_status === 'REVOKED' || c.revoked_at)
      throw new TokenUnavailable('revoked', 'The network authorization for this account was withdrawn.');
    return c;
  };
  conn = check(conn);
  if (!lapsing(conn) && !opts.force) return { token: decrypt(conn.access_token_enc!), connection: conn };
  // A refresh spends the (rotating) refresh token: take the row lock, then look again, since
  // another process may have refreshed while we waited.
  const locked = check((await trx('network_connections').where({ id: connectionId }).forUpdate().first()) as ConnectionRow | undefined);
  if (!lapsing(locked) && (!opts.force || locked.access_token_enc !== conn.access_token_enc))
    return { token: decrypt(locked.access_token_enc!), connection: locked };
  conn = locked;
  if (!conn.refresh_token_enc) {
    if (!opts.force && conn.access_token_expires_at && conn.access_token_expires_at.getTime() > Date.now())
      return { token: decrypt(conn.access_token_enc!), connection: conn };
    throw new TokenUnavailable('expired', 'The network access token expired and no refresh token is on file.');
  }
  try {
    const fresh = await network.refreshAccessToken(decrypt(conn.refresh_token_enc));
    const patch = {
      access_token_enc: encrypt(fresh.accessToken),
      access_token_expires_at: fresh.expiresAt,
      ...(fresh.refreshToken
        ? { refresh_token_enc: encrypt(fresh.refreshToken), refresh_token_expires_at: fresh.refreshTokenExpiresAt }
        : {}),
      updated_at: trx.fn.now(),
    };
    await trx('network_connections').where({ id: conn.id }).update(patch);
    return { token: fresh.accessToken, connection: { ...conn, access_token_expires_at: fresh.expiresAt } };
  } catch (err) {
    if (isNetworkError(err) && err.kind !== 'transient') {
      throw new TokenUnavailable('refresh_failed', `The network refused to refresh the access token (${err.code}).`);
    }
    throw err;
  }
}
