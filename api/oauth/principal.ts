import { ApiError, errors } from '../../lib/errors';
import { registerBearerResolver, type BearerRequest } from '../auth/authenticate';
import type { AuthContext } from '../auth/context';
import { registerReachLister } from '../operations/workspaces/workspaces';
import { bearerChallenge } from './metadata';
import { effectivePlanOf, reachableWorkspaces, workspaceAccess } from './reach';
import { bindingAllows, resourceOf } from './resources';
import { activeAccessToken, looksLikeToken, ACCESS_TOKEN_PREFIX } from './tokens';

// OAuth access tokens as API principals (spec 2.3, 4.2, 5.4, 5.5).

/** The consent-pinned workspace of each request's token, for `isDefault` in GET /v1/workspaces. */
const pinnedWorkspace = new WeakMap<AuthContext, string>();

function invalidToken(req: BearerRequest, message = 'The access token is unknown, expired or revoked.'): ApiError {
  // RFC 6750 3 / RFC 9728 5.1: tell the client where to find the authorization server.
  return new ApiError('invalid_token', message, undefined, {
    'WWW-Authenticate': bearerChallenge(resourceOf(req.resource), 'invalid_token'),
  });
}

export async function authenticateOAuthToken(req: BearerRequest): Promise<AuthContext> {
  if (!looksLikeToken(req.token, ACCESS_TOKEN_PREFIX)) throw invalidToken(req);
  const token = await activeAccessToken(req.token);
  if (!token) throw invalidToken(req);
  // RFC 8707 2 / RFC 6750 3.1: a token requested for the other resource server is not valid
  // here. The challenge sends the client to this resource's metadata to get one that is.
  if (!bindingAllows(token.resource, req.resource)) {
    throw invalidToken(req, `The access token was issued for ${token.resource}, not for this resource (${resourceOf(req.resource)}).`);
  }

  // spec 4.2: Service-Workspace-Id picks any workspace the user reaches; omitted, the pinned one.
  // Unreachable and nonexistent workspaces answer identically.
  const workspaceId = req.targetWorkspaceId ?? token.workspace_id;
  const access = await workspaceAccess(token.user_id, workspaceId);
  if (!access) throw errors.workspaceUnavailable();
  // spec 5.5: plan gating inherits the default (consent-pinned) workspace's plan, which for an
  // agency-paid workspace is the agency's; the targeted workspace's own plan does not gate.
  const plan = await effectivePlanOf(token.workspace_id);
  if (!plan) throw errors.workspaceUnavailable();

  const auth: AuthContext = {
    principal: {
      type: 'oauth_token',
      id: token.id,
      clientId: token.client_id,
      actingUserId: token.user_id,
      // The list stored at issuance, never re-expanded (spec 5.2 rule 3).
      scopes: token.scopes,
      // spec 4.9: the default project does not cross workspaces.
      defaultProjectId: workspaceId === token.workspace_id ? token.default_project_id : null,
    },
    workspaceId,
    gatingPlan: plan,
    scopes: new Set(token.scopes),
    role: access.role,
    projectIds: access.projectIds,
    reach: access.reach,
  };
  pinnedWorkspace.set(auth, token.workspace_id);
  return auth;
}

/** spec 2.15 / 4.2: what GET /v1/workspaces lists for an OAuth token. */
async function listReach(auth: AuthContext) {
  if (auth.principal.type !== 'oauth_token') return [];
  const pinned = pinnedWorkspace.get(auth);
  const rows = await reachableWorkspaces(auth.principal.actingUserId);
  return rows.map((w) => ({ id: w.id, name: w.name, reach: w.reach, isDefault: w.id === pinned }));
}

let installed = false;

/** Registers `svc_oat_` with the bearer authenticator and the OAuth reach lister; idempotent. */
export function registerOAuthPrincipals(): void {
  if (installed) return;
  installed = true;
  registerBearerResolver(ACCESS_TOKEN_PREFIX, authenticateOAuthToken);
  registerReachLister(listReach);
}
