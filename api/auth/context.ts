// Who is calling and what they may touch. Built once per request by `authenticate`.

export type Principal =
  | { type: 'api_key'; id: string; scopes: string[] }
  | { type: 'oauth_token'; id: string; clientId: string; actingUserId: string; scopes: string[]; defaultProjectId: string | null };

export type AccessRole = 'admin' | 'member' | 'client';

export interface AuthContext {
  principal: Principal;
  workspaceId: string;
  /** The plan that decides API access (spec 5.5: an agency-billed workspace carries the agency's plan). */
  gatingPlan: string;
  scopes: ReadonlySet<string>;
  role: AccessRole;
  /** null: every project of the workspace; otherwise the assigned projects (spec 5.5 plain members). */
  projectIds: ReadonlySet<string> | null;
  reach: 'member' | 'agency_owner';
}
