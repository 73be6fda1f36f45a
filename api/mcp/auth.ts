import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Context } from 'koa';
import { ApiError, errors } from '../../lib/errors';
import type { AuthContext } from '../auth/context';
import { protectedResourceMetadata } from '../oauth/metadata';
import { mcpResource as oauthMcpResource } from '../oauth/resources';
import { authenticateBearer } from '../pipeline/index';
import { resolveVersion, type ApiVersion } from '../versioning';
import { SessionNotFound } from './errors';
import type { SessionRecord } from './sessions';

// Who is calling the agent transport (spec 4.9, 5.1): the same bearer credentials as REST,
// checked on every HTTP request (so a revocation ends a session's next call), for the `mcp`
// resource. Failures carry the RFC 6750 / RFC 9728 challenge an MCP host needs to (re)run its
// OAuth flow.

/** What every MCP request carries into the tools, through the SDK's AuthInfo.extra. */
export interface McpRequestAuth {
  auth: AuthContext;
  token: string;
  apiVersion: ApiVersion;
  requestId: string;
}

/**
 * {mcp_url}, the `resource` of this listener's RFC 9728 metadata. The SDK's auth() sends that
 * value verbatim as the RFC 8707 indicator, and the authorization server binds tokens to the
 * same identifier (api/oauth/resources.ts), so both come from one function.
 */
export function mcpResource(): string {
  return oauthMcpResource();
}

export function resourceMetadataUrl(): string {
  return `${mcpResource()}/.well-known/oauth-protected-resource`;
}

/**
 * RFC 9728 for {mcp_url} (spec 4.9 Discovery). `scopes_supported` lists what the tools use
 * (plus offline_access, so that a host can stay connected): an MCP host requests these when
 * the challenge names none, and asking for webhooks:manage or settings:write here would only
 * widen consents for nothing.
 */
export function mcpResourceMetadata(scopes: readonly string[]) {
  return { ...protectedResourceMetadata(mcpResource()), scopes_supported: [...scopes], resource_name: 'Content Scheduling Service (MCP)' };
}

function quoted(v: string): string {
  return `"${v.replace(/["\\]/g, '')}"`;
}

/** RFC 6750 3 + RFC 9728 5.1. No `error` when no credential was sent (RFC 6750 3.1). */
export function bearerChallenge(opts: { error?: 'invalid_token'; scope: readonly string[] }): string {
  const parts = [`resource_metadata=${quoted(resourceMetadataUrl())}`];
  if (opts.error) parts.push(`error=${quoted(opts.error)}`);
  if (opts.scope.length) parts.push(`scope=${quoted(opts.scope.join(' '))}`);
  return `Bearer ${parts.join(', ')}`;
}

function withChallenge(err: ApiError, scope: readonly string[]): ApiError {
  const error = err.code === 'unauthenticated' ? undefined : ('invalid_token' as const);
  return new ApiError(err.code, err.message, err.details, {
    ...err.headers,
    'WWW-Authenticate': bearerChallenge({ error, scope }),
  });
}

/**
 * Authenticates one HTTP request of the MCP listener against `targetWorkspaceId` (a session's
 * active workspace, or Service-Workspace-Id when a session starts). A 401 is limited per client
 * address like REST's, and carries the challenge with the tools' scopes as the hint.
 */
export async function authenticateMcpRequest(
  ctx: Context,
  targetWorkspaceId: string | undefined,
  scopeHint: readonly string[],
): Promise<McpRequestAuth> {
  const apiVersion = resolveVersion(ctx.get('service-api-version') || undefined);
  try {
    const { auth, token } = await authenticateBearer({
      authorization: ctx.get('authorization') || undefined,
      targetWorkspaceId,
      resource: 'mcp',
      clientAddress: ctx.ip,
    });
    return { auth, token, apiVersion, requestId: ctx.state.requestId };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) throw withChallenge(err, scopeHint);
    throw err;
  }
}

/**
 * Authenticates a request of an existing session against its active workspace. A credential
 * of another subject gets the answer an unknown session gets (404), so the existence of
 * someone else's session is not disclosed.
 */
export async function authenticateForSession(
  ctx: Context,
  record: Pick<SessionRecord, 'subject' | 'workspaceId'>,
  scopeHint: readonly string[],
): Promise<McpRequestAuth> {
  let request: McpRequestAuth;
  try {
    request = await authenticateMcpRequest(ctx, record.workspaceId, scopeHint);
  } catch (err) {
    // The session's workspace may be out of this credential's reach because it belongs to
    // someone else: that is a 404 like any other session of someone else.
    if (err instanceof ApiError && err.code === 'workspace_unavailable') {
      const own = await authenticateMcpRequest(ctx, undefined, scopeHint);
      if (subjectOf(own.auth) !== record.subject) throw new SessionNotFound();
    }
    throw err;
  }
  if (subjectOf(request.auth) !== record.subject) throw new SessionNotFound();
  return request;
}

/**
 * What a session is bound to: the API key, or the OAuth client acting for one user. Not the
 * access token itself, which a host refreshes every hour within the same session.
 */
export function subjectOf(auth: AuthContext): string {
  const p = auth.principal;
  return p.type === 'api_key' ? `api_key:${p.id}` : `oauth:${p.clientId}:${p.actingUserId}`;
}

export function authInfoOf(r: McpRequestAuth): AuthInfo {
  const p = r.auth.principal;
  return {
    token: r.token,
    clientId: p.type === 'oauth_token' ? p.clientId : p.id,
    scopes: [...r.auth.scopes],
    resource: new URL(mcpResource()),
    extra: { mcp: r },
  };
}

export function requestAuthOf(info: AuthInfo | undefined): McpRequestAuth {
  const r = info?.extra?.mcp as McpRequestAuth | undefined;
  if (!r) throw errors.internal();
  return r;
}

const handling = new AsyncLocalStorage<McpRequestAuth>();

/**
 * Runs `fn`, the SDK handling the messages of one authenticated HTTP request, with that
 * request's credential in reach of what the SDK calls without it: the task store (tasks.ts),
 * whose interface carries a session id only, while tasks are bound to the credential.
 */
export function handlingRequest<T>(request: McpRequestAuth, fn: () => T): T {
  return handling.run(request, fn);
}

/** The credential of the HTTP request whose messages are being handled (handlingRequest). */
export function requestInHand(): McpRequestAuth {
  const r = handling.getStore();
  if (!r) throw errors.internal();
  return r;
}
