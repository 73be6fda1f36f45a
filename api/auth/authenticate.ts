import { errors } from '../../lib/errors';
import { authenticateApiKey, planAllowsApi } from './apiKeys';
import type { AuthContext } from './context';

// spec 5.1: one bearer wire format, several credential kinds told apart by prefix. Other
// credential kinds (OAuth access tokens) register a resolver for their prefix.

export interface BearerRequest {
  token: string;
  targetWorkspaceId: string | undefined;
  resource: 'rest' | 'mcp';
}
export type BearerResolver = (req: BearerRequest) => Promise<AuthContext>;

const resolvers: Array<{ prefix: string; resolve: BearerResolver }> = [
  {
    prefix: 'svc_sk_',
    resolve: async ({ token, targetWorkspaceId }) => {
      const auth = await authenticateApiKey(token);
      // spec 4.2: an API key sent with a different Service-Workspace-Id is refused.
      if (targetWorkspaceId !== undefined && targetWorkspaceId !== auth.workspaceId) throw errors.workspaceUnavailable();
      return auth;
    },
  },
];

export function registerBearerResolver(prefix: string, resolve: BearerResolver): void {
  if (!resolvers.some((r) => r.prefix === prefix)) resolvers.push({ prefix, resolve });
}

export function bearerToken(authorization: string | undefined): string {
  if (!authorization || authorization.trim() === '') throw errors.unauthenticated();
  const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization);
  if (!m) throw errors.invalidToken('The Authorization header must be "Bearer <token>".');
  return m[1]!;
}

export async function authenticate(req: BearerRequest): Promise<AuthContext> {
  const resolver = resolvers.find((r) => req.token.startsWith(r.prefix));
  if (!resolver) throw errors.invalidToken();
  const auth = await resolver.resolve(req);
  // spec 1 rule 2: API access needs a plan that includes it.
  if (!planAllowsApi(auth.gatingPlan)) throw errors.planNotEligible(auth.gatingPlan);
  return auth;
}
