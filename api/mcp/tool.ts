import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ApiError, errors } from '../../lib/errors';
import { checkScopes, type ScopeRule } from '../../lib/scopes';
import type { AuthContext } from '../auth/context';
import { requestHash, unwrapStored, validateIdempotencyKey, withIdempotency } from '../idempotency';
import type { AnyOperation, OperationContext } from '../operation';
import { findProject } from '../operations/projects/present';
import { consume } from '../rateLimit';
import { authorize } from '../rest/adapter';
import { parseInput } from '../validation';
import type { ApiDeps } from '../deps';
import type { McpRequestAuth } from './auth';

// A tool is an adapter over one operation (ARCHITECTURE.md "One operation, three doors"): it
// translates arguments and results and adds what only the agent transport has (the default
// project, progress), and nothing else. The chain mirrors the REST adapter's: rate limit →
// client role + the operation's scopes (the shared `authorize`) → the tool's scope from the
// spec 4.9 table → default project → validation (the operation's own zod schema, so the same
// input gives the same error code) → idempotency → handler.

/** The session a call runs in: its active workspace can be moved by switch_workspace. */
export interface SessionHandle {
  readonly id: string;
  readonly workspaceId: string;
  switchWorkspace(workspaceId: string): Promise<void>;
}

export interface ProgressReporter {
  /** Sends notifications/progress; values that would not increase are dropped (MCP: progress MUST increase). */
  report(progress: number, message?: string): Promise<void>;
}

export interface ToolCallContext {
  request: McpRequestAuth;
  session: SessionHandle;
  signal: AbortSignal;
  /** Present when the caller passed a progressToken. */
  progress: ProgressReporter | null;
  /** The MCP app's outside-world clients (api/deps.ts), passed on to the operation. */
  deps?: ApiDeps;
}

export interface ToolOutput { body: Record<string, unknown>; replayed?: boolean }

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** The scope of the spec 4.9 table, checked on top of the operation's own rule. */
  scopes: ScopeRule;
  annotations: ToolAnnotations;
  inputSchema: Tool['inputSchema'];
  /** The operation behind the tool (every tool but switch_workspace). */
  operation?: AnyOperation;
  call(ctx: ToolCallContext, args: Record<string, unknown>): Promise<ToolOutput>;
}

export const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** spec 4.9: write tools are non-destructive. */
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$',
  description: 'Optional (spec 8): the same key and arguments within 24 hours replay the first answer instead of acting twice; the same key with other arguments is refused with idempotency_key_conflict.',
};

type JsonSchemaObject = Tool['inputSchema'] & { required?: string[]; properties?: Record<string, Record<string, unknown>> };

function jsonSchemaOf(schema: z.ZodType): JsonSchemaObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest as JsonSchemaObject;
}

export interface OperationToolSpec {
  name: string;
  title: string;
  description: string;
  scopes: ScopeRule;
  annotations: ToolAnnotations;
  /**
   * spec 4.9 default project: `projectId` becomes optional and defaults to the project pinned
   * at consent; with neither the call answers invalid_request.
   */
  defaultProject?: boolean;
  /** Honour `idempotencyKey` where the REST twin honours Idempotency-Key (every write). */
  idempotent?: boolean;
  /** Describes arguments for an agent; merged into the generated schema. */
  argumentNotes?: Record<string, string>;
  /** Post-processing of a successful answer (progress following, session-specific fields). */
  finish?: (ctx: ToolCallContext, body: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

async function defaultProjectOf(auth: AuthContext): Promise<string> {
  const p = auth.principal;
  // spec 4.9: API keys carry no default project; the OAuth resolver already drops it outside
  // the consent workspace, so it never crosses workspaces.
  const pinned = p.type === 'oauth_token' ? p.defaultProjectId : null;
  if (!pinned || !(await findProject(auth, pinned))) {
    throw errors.invalidRequest('`projectId` is required: this credential has no default project (none was pinned at consent, it is gone, or it belongs to another workspace).', { field: 'projectId' });
  }
  return pinned;
}

/** spec 8: the same workspace buckets as REST, so an agent and a script share one budget. */
export async function rateLimitTool(kind: AnyOperation['kind'], auth: AuthContext): Promise<void> {
  const rl = await consume(kind, auth.workspaceId);
  if (!rl.allowed) {
    throw new ApiError(429, 'rate_limited', `Rate limit of ${rl.limit} requests per minute reached; retry in ${rl.retryAfter} s.`, { retryAfterSeconds: rl.retryAfter }, { 'Retry-After': String(rl.retryAfter) });
  }
}

export function checkToolScopes(tool: Pick<ToolDefinition, 'scopes'>, auth: AuthContext): void {
  const check = checkScopes(auth.scopes, tool.scopes);
  if (!check.ok) throw errors.scopeMissing(check.requiredScope);
}

export function operationTool(op: AnyOperation, spec: OperationToolSpec): ToolDefinition {
  const schema = jsonSchemaOf(op.input);
  schema.properties ??= {};
  if (spec.defaultProject) {
    schema.required = (schema.required ?? []).filter((k) => k !== 'projectId');
    schema.properties.projectId = { ...schema.properties.projectId, description: 'Defaults to the project pinned when access was granted; required for API keys.' };
  }
  if (schema.properties.limit && Object.keys(schema.properties.limit).length === 0) {
    schema.properties.limit = { type: 'integer', minimum: 1, description: 'Page size; values above the maximum are clamped.' };
  }
  for (const [k, note] of Object.entries(spec.argumentNotes ?? {})) schema.properties[k] = { ...schema.properties[k], description: note };
  if (spec.idempotent) schema.properties.idempotencyKey = IDEMPOTENCY_KEY_SCHEMA;
  if (schema.required?.length === 0) delete schema.required;

  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    scopes: spec.scopes,
    annotations: { title: spec.title, ...spec.annotations },
    inputSchema: schema,
    operation: op,
    async call(ctx, args) {
      const { auth, apiVersion, requestId } = ctx.request;
      await rateLimitTool(op.kind, auth);
      authorize(op, auth, apiVersion);
      checkToolScopes(spec, auth);

      const { idempotencyKey, ...raw } = args;
      if (idempotencyKey !== undefined && (!spec.idempotent || typeof idempotencyKey !== 'string')) {
        throw errors.unprocessable(spec.idempotent ? '`idempotencyKey` must be a string.' : `\`idempotencyKey\` is not an argument of ${spec.name}.`);
      }
      if (idempotencyKey !== undefined) validateIdempotencyKey(idempotencyKey);
      if (spec.defaultProject && raw.projectId === undefined) raw.projectId = await defaultProjectOf(auth);
      const input = parseInput(op.input, raw, op.inputSource);
      const opCtx: OperationContext = { auth, requestId, apiVersion, deps: ctx.deps };

      let body: Record<string, unknown>;
      let replayed = false;
      if (idempotencyKey !== undefined) {
        // Keys live in the workspace's one key space; the operation string keeps a key used on
        // REST from replaying a tool's answer (a reuse across doors is a conflict, not a replay).
        const result = await withIdempotency(auth.workspaceId, idempotencyKey, `MCP ${spec.name}`, requestHash(spec.name, input),
          async () => ({ status: 200, body: await op.handler(opCtx, input) }), { encryptBody: op.secretResponse });
        const unwrapped = unwrapStored(result.response);
        if (unwrapped.error) throw unwrapped.error;
        body = unwrapped.body as Record<string, unknown>;
        replayed = result.replayed;
      } else {
        body = (await op.handler(opCtx, input)) as Record<string, unknown>;
      }
      if (spec.finish) body = await spec.finish(ctx, body);
      // Like REST's Idempotent-Replayed header: on writes only.
      return { body, replayed: op.kind === 'write' ? replayed : undefined };
    },
  };
}
