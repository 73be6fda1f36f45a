import type { AuthContext } from '../auth/context';
import type { ApiVersion } from '../versioning';
import { insufficientScope, missingScopes } from './auth';
import { messagesOf } from './http';
import { findTool } from './tools/index';

// The MCP authorization spec's scope challenge: a tools/call that an OAuth token is not
// scoped for is refused at the HTTP layer with 403 and WWW-Authenticate error="insufficient_scope"
// naming the scopes to ask for, so that the host reruns its authorization with them (step-up)
// instead of showing a failure. API keys cannot be re-authorized by a host: for them the call
// reaches the tool and answers isError with code scope_missing, exactly as REST answers 403
// scope_missing (spec 7.2). Both carry the same code.

export function refuseUnscopedToolCalls(body: unknown, auth: AuthContext, version: ApiVersion): void {
  if (auth.principal.type !== 'oauth_token') return;
  for (const m of messagesOf(body)) {
    if (m.method !== 'tools/call') continue;
    const name = (m.params as { name?: unknown } | undefined)?.name;
    const tool = typeof name === 'string' ? findTool(name) : undefined;
    if (!tool) continue;
    const opRule = tool.operation ? (typeof tool.operation.scopes === 'function' ? tool.operation.scopes(version) : tool.operation.scopes) : 'any';
    const missing = [...new Set([...missingScopes(auth.scopes, tool.scopes), ...missingScopes(auth.scopes, opRule)])];
    if (missing.length) throw insufficientScope(auth, missing, tool.name);
  }
}
