import type { AuthContext } from '../api/auth/context';
import { createApiDeps, type ApiDeps } from '../api/deps';
import type { AnyOperation, OperationContext } from '../api/operation';
import type { ApiVersion } from '../api/versioning';
import { ALL_SCOPES } from '../lib/scopes';
import { config } from '../lib/config';
import { db } from '../lib/db';
import { ApiError } from '../lib/errors';
import { randomBase62 } from '../lib/ids';
import { AdminError, getWorkspace } from './provision';

// bin/admin commands that change what a client could change go through the API's own
// operations (api/operations/*), not around them: the input is parsed by the operation's zod
// schema and the handler applies its rules, so an operator's webhook endpoint, knowledge
// document or idea link is checked and stored exactly as a client's would be. The caller acts
// as an admin of the workspace holding every scope.

/** The operator, seen by an operation: an admin of the workspace with every scope. */
export async function operatorContext(workspaceId: string): Promise<OperationContext> {
  const w = await getWorkspace(workspaceId);
  const billing = w.billing_workspace_id ? await db()('workspaces').where({ id: w.billing_workspace_id }).first('plan') : undefined;
  const auth: AuthContext = {
    // Not a stored key: the id marks rows the operator created (created_by and the like).
    principal: { type: 'api_key', id: 'operator', scopes: [...ALL_SCOPES] },
    workspaceId: w.id,
    gatingPlan: billing?.plan ?? w.plan,
    scopes: new Set(ALL_SCOPES),
    role: 'admin',
    projectIds: null,
    reach: 'member',
  };
  return { auth, requestId: `req_admin_${randomBase62(16)}`, apiVersion: config.apiVersions.current as ApiVersion, deps: apiDeps() };
}

// The API's outside-world clients, built once per process like the app factories do: a post
// scheduled here is verified against the network exactly as PATCH does it.
let deps: ApiDeps | null = null;
const apiDeps = (): ApiDeps => (deps ??= createApiDeps());

/** Parses like the API does and turns its refusals into one operator-readable line. */
export async function callOperation<T>(op: AnyOperation, ctx: OperationContext, raw: Record<string, unknown>): Promise<T> {
  const parsed = op.input.safeParse(raw);
  if (!parsed.success) throw new AdminError(parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '));
  try {
    return (await op.handler(ctx, parsed.data)) as T;
  } catch (err) {
    if (err instanceof ApiError) {
      const reason = (err.details as { reason?: string } | undefined)?.reason;
      throw new AdminError(`${op.name} refused (${err.code}${reason ? `, ${reason}` : ''}): ${err.message}`);
    }
    throw err;
  }
}

/** One operation of one workspace, as the operator: the `data` of its answer. */
export async function operate<T = unknown>(workspaceId: string, op: AnyOperation, raw: Record<string, unknown>): Promise<T> {
  return (await callOperation<{ data: T }>(op, await operatorContext(workspaceId), raw)).data;
}
