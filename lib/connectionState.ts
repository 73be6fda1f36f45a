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
}

/**
 * The columns a project read joins from its connection (`network_connections as c`), in the
 * shape the project presenter and networkBlock read: `projects.*` plus these.
 */
export const PROJECT_CONNECTION_COLUMNS = [
  'projects.*',
  'c.id as c_id',
  'c.display_name as c_display_name',
  'c.access_token_enc',
  'c.access_token_expires_at',
  'c.connection_status',
  'c.last_validated_at',
  'c.consecutive_failures',
  'c.revoked_at',
];

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
    detail: state === 'connected' ? null : DETAIL[state],
    reconnectUrl: state === 'connected' ? null : reconnectUrl(ids.workspaceId, ids.projectId),
  };
}
