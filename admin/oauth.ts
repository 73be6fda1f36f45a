import { invalidateLocally } from '../lib/auth/invalidation';
import { db } from '../lib/db';
import { newId } from '../lib/ids';
import { Membership } from '../lib/models';
import { ROLE_LABELS } from '../lib/roles';
import {
  ACCESS_TOKEN_PREFIX,
  createFamily,
  insertAccessToken,
  insertRefreshToken,
  issuesRefreshToken,
  randomToken,
  REFRESH_TOKEN_PREFIX,
} from '../lib/oauth/tokens';
import { revokeGrant, userGrants } from '../lib/oauth/grants';

// Operator administration of OAuth data: grants (consents), agency ownership and clients, for
// bin/admin (through admin/provision.ts). What the authorization server itself does with grants is
// in lib/oauth/grants.ts. Errors are plain messages; provision wraps them in its AdminError.

// The caches these edits outdate belong to the API (api/oauth/reach.ts, clients.ts).
const clearReachCache = () => invalidateLocally('reach');
const forgetClient = (clientId: string) => invalidateLocally('client', clientId);

export class OAuthAdminError extends Error {}

const ADMIN_SLUGS = Object.entries(ROLE_LABELS)
  .filter(([, label]) => label === 'Admin')
  .map(([slug]) => slug);

/**
 * spec 5.5 agency-owner grant: `userId` owns the agency that pays for `clientWorkspaceId`.
 * With `agencyWorkspaceId` the client workspace is (re)billed to that agency first. An owner
 * is an Admin of the agency: one is made when the user is not a member yet; a member with
 * another role is refused rather than silently promoted.
 */
export async function grantAgencyOwnership(input: { userId: string; clientWorkspaceId: string; agencyWorkspaceId?: string }) {
  return db().transaction(async (trx) => {
    const client = await trx('workspaces').where({ id: input.clientWorkspaceId }).forUpdate().first('id', 'billing_workspace_id');
    if (!client) throw new OAuthAdminError(`no workspace ${input.clientWorkspaceId}`);
    const agencyId = input.agencyWorkspaceId ?? client.billing_workspace_id;
    if (!agencyId) throw new OAuthAdminError(`workspace ${client.id} is not billed to an agency; name the agency with --agency`);
    if (agencyId === client.id) throw new OAuthAdminError('a workspace cannot be its own agency');
    const agency = await trx('workspaces').where({ id: agencyId }).first('id');
    if (!agency) throw new OAuthAdminError(`no agency workspace ${agencyId}`);
    if (client.billing_workspace_id !== agencyId) {
      await trx('workspaces').where({ id: client.id }).update({ billing_workspace_id: agencyId, updated_at: trx.fn.now() });
    }
    const membership = await Membership.forWorkspace(agencyId, trx).where('user_id', input.userId).select('role').first();
    if (membership && !ADMIN_SLUGS.includes(membership.role)) {
      throw new OAuthAdminError(`the user is a ${membership.role} of agency ${agencyId}; agency owners are Admins, change the role first`);
    }
    if (!membership) {
      await trx('memberships').insert({ id: newId('membership'), workspace_id: agencyId, user_id: input.userId, role: 'admin' });
    }
    await trx('agency_owners')
      .insert({ agency_workspace_id: agencyId, user_id: input.userId })
      .onConflict(['agency_workspace_id', 'user_id'])
      .ignore();
    const clients = await trx('workspaces').where({ billing_workspace_id: agencyId }).orderBy('name').select('id', 'name');
    clearReachCache();
    return { userId: input.userId, agencyWorkspaceId: agencyId, clientWorkspaces: clients as Array<{ id: string; name: string }> };
  });
}

export async function revokeAgencyOwnership(input: { userId: string; agencyWorkspaceId: string }) {
  const n = await db()('agency_owners').where({ agency_workspace_id: input.agencyWorkspaceId, user_id: input.userId }).delete();
  if (!n) throw new OAuthAdminError(`the user does not own agency ${input.agencyWorkspaceId}`);
  clearReachCache();
  return { userId: input.userId, agencyWorkspaceId: input.agencyWorkspaceId, removed: true };
}

function iso(d: Date | null | undefined) {
  return d ? d.toISOString() : null;
}

export async function listGrants(userId: string) {
  const rows = await userGrants(userId);
  return rows.map((g: Record<string, any>) => ({
    id: g.id as string,
    clientId: g.client_id as string,
    clientName: g.client_name as string,
    workspaceId: g.workspace_id as string,
    workspaceName: (g.workspace_name ?? '') as string,
    defaultProjectId: (g.default_project_id ?? null) as string | null,
    accessLevel: g.access_level as string,
    scopes: g.scopes as string[],
    remembered: Boolean(g.remembered),
    status: g.revoked_at ? 'revoked' : 'active',
    activeAccessTokens: g.active_access_tokens as number,
    createdAt: iso(g.created_at),
    updatedAt: iso(g.updated_at),
    revokedAt: iso(g.revoked_at),
  }));
}

/** Revokes a user's live grants (one by id, those of one client, or all) and every token issued under them. */
export async function revokeGrants(input: { userId: string; grantId?: string; clientId?: string }) {
  const q = db()('oauth_grants').where({ user_id: input.userId }).whereNull('revoked_at');
  if (input.grantId) q.where({ id: input.grantId });
  if (input.clientId) q.where({ client_id: input.clientId });
  const ids = (await q.pluck('id')) as string[];
  if (input.grantId && ids.length === 0) throw new OAuthAdminError(`no live grant ${input.grantId} for this user`);
  for (const id of ids) await revokeGrant(id);
  return { userId: input.userId, revoked: ids };
}

export async function listClients() {
  const rows = await db()('oauth_clients')
    .orderBy('created_at', 'desc')
    .select('id', 'client_name', 'redirect_uris', 'scope', 'software_id', 'software_version', 'trusted', 'created_at', 'metadata_url');
  return rows.map((c: Record<string, any>) => ({
    id: c.id,
    name: c.client_name,
    redirectUris: c.redirect_uris,
    scope: c.scope,
    softwareId: c.software_id,
    softwareVersion: c.software_version,
    trusted: c.trusted,
    /** A client known by its Client ID Metadata Document: its client_id (the row is a snapshot of the document last approved). */
    metadataUrl: c.metadata_url ?? null,
    createdAt: iso(c.created_at),
  }));
}

/** The consent page shows "Verified" instead of "Unverified" for a client an operator vouches for. */
export async function setClientTrust(clientId: string, trusted: boolean) {
  const n = await db()('oauth_clients').where({ id: clientId }).update({ trusted });
  if (!n) throw new OAuthAdminError(`no OAuth client ${clientId}`);
  forgetClient(clientId);
  return { id: clientId, trusted };
}

/**
 * Issues an access token outside the authorization flow (support, scripted tests): the same
 * rows a code exchange writes (a live grant for the user and client, a token family, the
 * token), so revoking the grant or the family kills it like any other. No refresh token.
 * The caller checks that the user reaches the workspace and that the scopes are known.
 */
/**
 * An access token without the browser flow. `expiresInSeconds` shortens (or lengthens) its life
 * so that client authors can exercise their refresh handling; with `offline_access` a client
 * registered for the refresh_token grant also gets a refresh token, by the code exchange's rule
 * (spec 5.3.4), and its refreshes are ordinary ones (tokens of the configured life).
 */
export async function mintAccessToken(input: {
  userId: string;
  clientId: string;
  workspaceId: string;
  defaultProjectId: string | null;
  scopes: string[];
  accessLevel: 'read' | 'full';
  expiresInSeconds?: number;
}) {
  const client = await db()('oauth_clients').where({ id: input.clientId }).first('id', 'grant_types');
  if (!client) throw new OAuthAdminError(`no OAuth client ${input.clientId}`);
  const plaintext = randomToken(ACCESS_TOKEN_PREFIX);
  const refresh = issuesRefreshToken(input.scopes, client.grant_types ?? []) ? randomToken(REFRESH_TOKEN_PREFIX) : null;
  const row = await db().transaction(async (trx) => {
    let grant = await trx('oauth_grants')
      .where({ user_id: input.userId, client_id: input.clientId })
      .whereNull('revoked_at')
      .forUpdate()
      .first('id');
    if (!grant) {
      [grant] = await trx('oauth_grants')
        .insert({
          id: newId('oauthGrant'),
          user_id: input.userId,
          client_id: input.clientId,
          workspace_id: input.workspaceId,
          default_project_id: input.defaultProjectId,
          access_level: input.accessLevel,
          requested_scopes: input.scopes,
          scopes: input.scopes,
          remembered: true,
        })
        .returning('id');
    }
    const family = await createFamily(trx, {
      grantId: grant.id,
      clientId: input.clientId,
      userId: input.userId,
      workspaceId: input.workspaceId,
      defaultProjectId: input.defaultProjectId,
      scopes: input.scopes,
      codeHash: null,
      resource: null,
    });
    const access = await insertAccessToken(trx, family, plaintext, input.scopes, family.resource, input.expiresInSeconds);
    if (refresh) await insertRefreshToken(trx, family.id, refresh, access.id, null);
    return access;
  });
  return {
    access_token: plaintext,
    token_type: 'Bearer' as const,
    expires_in: Math.max(0, Math.round((row.expires_at.getTime() - row.created_at.getTime()) / 1000)),
    scope: input.scopes.join(' '),
    ...(refresh ? { refresh_token: refresh } : {}),
    expiresAt: iso(row.expires_at),
    id: row.id,
    familyId: row.family_id,
  };
}
