import { config } from './config';

// spec 2.6: the network connection block, derived from stored health only (reading a project
// never probes the network). `state` applies token presence first; `canPublish` follows state.

export type ConnectionState = 'connected' | 'expiring_soon' | 'degraded' | 'disconnected' | 'revoked';

export interface StoredConnection {
  access_token_enc: string | null;
  access_token_expires_at: Date | null;
  connection_status: string;
  last_validated_at: Date | null;
  consecutive_failures: number;
  revoked_at: Date | null;
  /** The latest failure's code and time (lib/publishing/probe.ts); absent where a reader does not need `detail`. */
  last_error?: string | null;
  last_failure_at?: Date | null;
}

/** The columns `deriveState` reads, from a join of `network_connections as c`. */
export const STORED_CONNECTION_COLUMNS = [
  'c.access_token_enc',
  'c.access_token_expires_at',
  'c.connection_status',
  'c.last_validated_at',
  'c.consecutive_failures',
  'c.revoked_at',
];

/**
 * The columns a project read joins from its connection, in the shape the project presenter and
 * networkBlock read: `projects.*` plus these.
 */
export const PROJECT_CONNECTION_COLUMNS = [
  'projects.*',
  'c.id as c_id',
  'c.display_name as c_display_name',
  ...STORED_CONNECTION_COLUMNS,
  'c.last_error as c_last_error',
  'c.last_failure_at as c_last_failure_at',
];

/** STORED_CONNECTION_COLUMNS as a left join reads them: null where the project has no connection. */
export type JoinedConnection = { [K in keyof StoredConnection]-?: StoredConnection[K] | null };

/** A joined connection with the stored defaults (an unknown status, no failures yet). */
export function storedConnection(c: Omit<JoinedConnection, 'last_error' | 'last_failure_at'>): StoredConnection {
  return {
    access_token_enc: c.access_token_enc,
    access_token_expires_at: c.access_token_expires_at,
    connection_status: c.connection_status ?? 'UNKNOWN',
    last_validated_at: c.last_validated_at,
    consecutive_failures: c.consecutive_failures ?? 0,
    revoked_at: c.revoked_at,
  };
}

export interface NetworkBlock {
  state: ConnectionState;
  canPublish: boolean;
  connectionStatus: string;
  lastValidatedAt: string | null;
  accessTokenExpiresAt: string | null;
  detail: string | null;
  reconnectUrl: string | null;
}

const DETAIL: Record<Exclude<ConnectionState, 'connected'>, string> = {
  expiring_soon: 'The network access token lapses soon; reconnect the account to keep publishing.',
  degraded: 'Recent calls to the network failed; publishing may fail until the connection recovers.',
  disconnected: 'No usable network token is on file; connect the account in the dashboard.',
  revoked: 'The network authorization was withdrawn; reconnect the account in the dashboard.',
};

/**
 * spec 2.6 `degraded` after transient failures only (lib/publishing/probe.ts rule 4: the streak is
 * at 0): the outage named, by the code the network client gave it. Reconnecting cannot fix it.
 */
const OUTAGE: Record<string, string> = {
  timeout: 'did not answer in time',
  connection_error: 'could not be reached',
  rate_limited: 'asked us to slow down (rate limited)',
  unavailable: 'answered that it is unavailable',
  server_error: 'answered with a server error',
  invalid_response: 'sent an answer that could not be read',
};

function outageDetail(conn: StoredConnection): string {
  const what = OUTAGE[conn.last_error ?? ''] ?? 'failed to answer';
  const when = conn.last_failure_at ? ` at ${conn.last_failure_at.toISOString()}` : '';
  return `The network ${what}${when}; the account itself is fine, and the next successful call clears this.`;
}

/** Degraded by transient failures alone: nothing for a human to reconnect. */
const isOutage = (conn: StoredConnection, state: ConnectionState) => state === 'degraded' && conn.consecutive_failures === 0;

export function deriveState(conn: StoredConnection, now: Date = new Date()): ConnectionState {
  if (!conn.access_token_enc) return 'disconnected';
  if (conn.connection_status === 'REVOKED' || conn.revoked_at) return 'revoked';
  if (conn.connection_status === 'DISCONNECTED') return 'disconnected';
  if (conn.connection_status === 'DEGRADED' || conn.consecutive_failures > 0) return 'degraded';
  const soon = now.getTime() + config.network.expiringSoonDays * 86_400_000;
  if (conn.access_token_expires_at && conn.access_token_expires_at.getTime() <= soon) return 'expiring_soon';
  return 'connected';
}

export function canPublish(state: ConnectionState): boolean {
  return state === 'connected' || state === 'expiring_soon' || state === 'degraded';
}

export function reconnectUrl(workspaceId: string, projectId: string): string {
  return `${config.dashboardUrl}/workspaces/${workspaceId}/projects/${projectId}/connection`;
}

export function networkBlock(conn: StoredConnection, ids: { workspaceId: string; projectId: string }, now = new Date()): NetworkBlock {
  const state = deriveState(conn, now);
  return {
    state,
    canPublish: canPublish(state),
    connectionStatus: conn.connection_status,
    lastValidatedAt: conn.last_validated_at?.toISOString() ?? null,
    accessTokenExpiresAt: conn.access_token_expires_at?.toISOString() ?? null,
    detail: state === 'connected' ? null : isOutage(conn, state) ? outageDetail(conn) : DETAIL[state],
    // spec 2.6: `null` when nothing needs fixing; an outage is not fixed by reconnecting.
    reconnectUrl: state === 'connected' || isOutage(conn, state) ? null : reconnectUrl(ids.workspaceId, ids.projectId),
  };
}
