import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { config } from '../../lib/config';
import { errors } from '../../lib/errors';
import type { ScopeRule } from '../../lib/scopes';
import type { AuthContext } from '../auth/context';
import type { ApiDeps } from '../deps';
import type { AnyOperation } from '../operation';
import { defaultProject } from '../operations/projects/resolve';
import { limitWorkspace, operationScopes, runOperation } from '../pipeline/index';
import type { ApiVersion } from '../versioning';
import type { McpRequestAuth } from './auth';
import { toolErrorSchema } from './errors';

// A tool is an adapter over one operation (ARCHITECTURE.md "One operation, three doors"): it
// translates arguments and results and adds what only the agent transport has (the default
// project, progress), and nothing else. The steps are the pipeline's (api/pipeline), the same
// as REST's; the tool adds its spec 4.9 scope where the table asks for more than the operation,
// and the default project before validation (the operation's own zod schema, so the same input
// gives the same error code through both doors).

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
  /** A task-augmented call: the operation's answer (the queued job) is the result, `finish` does not run. */
  asTask?: boolean;
}

export interface ToolOutput {
  body: Record<string, unknown>;
  replayed?: boolean;
}

/** What a tool says of itself, whether written out or built over an operation. */
interface ToolIdentity {
  name: string;
  title: string;
  description: string;
  /**
   * The scope of the spec 4.9 table where it adds to the operation's own rule (or replaces it,
   * see `scopesReplaceOperation`); absent, the operation's rule alone applies.
   */
  scopes?: ScopeRule;
  /** The tool's `scopes` stand instead of the operation's rule (generate_post, spec 4.9 vs 4.1). */
  scopesReplaceOperation?: boolean;
  annotations: ToolAnnotations;
}

export interface ToolDefinition extends ToolIdentity {
  inputSchema: Tool['inputSchema'];
  /** What `structuredContent` holds (MCP 2025-06-18), from the operation's `output` (toolOutputSchema). */
  outputSchema: NonNullable<Tool['outputSchema']>;
  /** The operation behind the tool (every tool but switch_workspace). */
  operation?: AnyOperation;
  /** MCP 2025-11-25 tasks (`execution.taskSupport`): set on tools whose call queues a job; the task is that job. */
  taskSupport?: 'optional';
  /** For a task tool whose operation queues a job only for some inputs: whether these arguments do. */
  startsJob?: (args: Record<string, unknown>) => boolean;
  call(ctx: ToolCallContext, args: Record<string, unknown>): Promise<ToolOutput>;
}

export const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** spec 4.9: write tools are non-destructive. */
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description:
    'Optional (spec 8): the same key and arguments within 24 hours replay the first answer instead of acting twice; the same key with other arguments is refused with idempotency_key_conflict.',
};

type JsonSchemaObject = Tool['inputSchema'] & { required?: string[]; properties?: Record<string, Record<string, unknown>> };

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): JsonSchemaObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest as JsonSchemaObject;
}

/**
 * A tool's outputSchema from the zod `output` its answer is typed by (the operation's, or the
 * tool's own where `finish` adds to it). MCP 2025-06-18 tools: structuredContent must satisfy
 * it, and its top level is an object. A failed call's result carries structured content too
 * (spec 4.9: { code, message, requestId, documentationUrl }), and the TypeScript SDK's client
 * validates that against the same schema (modelcontextprotocol/typescript-sdk#1943), so the
 * schema names both answers.
 */
export function toolOutputSchema(output: z.ZodType): ToolDefinition['outputSchema'] {
  return { type: 'object', anyOf: [jsonSchemaOf(output, 'output'), jsonSchemaOf(toolErrorSchema, 'output')] };
}

export interface OperationToolSpec extends ToolIdentity {
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
  /** The answer's schema where `finish` adds fields the REST twin cannot have; the operation's `output` otherwise. */
  output?: z.ZodType;
  /**
   * The call queues a job and answers it (`{ data: Job }`): the tool may run as an MCP task
   * (task support `optional`), `finish` then left out. A function says which arguments queue one.
   */
  queuesJob?: true | ((args: Record<string, unknown>) => boolean);
}

/** spec 8: the same workspace buckets as REST, so an agent and a script share one budget. */
export async function rateLimitTool(kind: AnyOperation['kind'], auth: AuthContext): Promise<void> {
  await limitWorkspace(kind, auth.workspaceId);
}

/**
 * The scope rules a call of `tool` must satisfy: the operation's own (under every supported
 * API version when it depends on one) unless the tool's replace it, and the tool's. What the
 * protected-resource metadata and the 401 hint list is derived from these.
 */
export function toolScopeRules(tool: ToolDefinition): ScopeRule[] {
  const rules: ScopeRule[] = [];
  const op = tool.operation;
  if (op && !tool.scopesReplaceOperation) {
    for (const version of config.apiVersions.supported as readonly ApiVersion[]) rules.push(operationScopes(op, version));
  }
  if (tool.scopes) rules.push(tool.scopes);
  return rules;
}

export function operationTool(op: AnyOperation, spec: OperationToolSpec): ToolDefinition {
  const schema = jsonSchemaOf(op.input);
  schema.properties ??= {};
  if (spec.defaultProject) {
    schema.required = (schema.required ?? []).filter((k) => k !== 'projectId');
    schema.properties.projectId = {
      ...schema.properties.projectId,
      description: 'Defaults to the project pinned when access was granted; required for API keys.',
    };
  }
  if (schema.properties.limit && Object.keys(schema.properties.limit).length === 0) {
    schema.properties.limit = { type: 'integer', minimum: 1, description: 'Page size; values above the maximum are clamped.' };
  }
  for (const [k, note] of Object.entries(spec.argumentNotes ?? {})) schema.properties[k] = { ...schema.properties[k], description: note };
  if (spec.idempotent) schema.properties.idempotencyKey = IDEMPOTENCY_KEY_SCHEMA;
  if (schema.required?.length === 0) delete schema.required;

  const doorScopes = spec.scopes ? { rule: spec.scopes, replace: spec.scopesReplaceOperation } : undefined;
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    scopes: spec.scopes,
    scopesReplaceOperation: spec.scopesReplaceOperation,
    annotations: { title: spec.title, ...spec.annotations },
    inputSchema: schema,
    outputSchema: toolOutputSchema(spec.output ?? op.output),
    operation: op,
    ...(spec.queuesJob ? { taskSupport: 'optional' as const } : {}),
    ...(typeof spec.queuesJob === 'function' ? { startsJob: spec.queuesJob } : {}),
    async call(ctx, args) {
      const { auth, apiVersion, requestId } = ctx.request;
      // A tool without idempotency has no such argument: it reaches the operation's strict schema
      // like any unknown argument, and is refused with the same code (api/pipeline validate).
      const { idempotencyKey, ...rest } = args;
      const raw = spec.idempotent ? rest : args;
      if (spec.idempotent && idempotencyKey !== undefined && typeof idempotencyKey !== 'string') {
        throw errors.unprocessable('`idempotencyKey` must be a string.');
      }
      const result = await runOperation({
        op,
        requestId,
        apiVersion,
        authenticate: async () => auth,
        deps: ctx.deps,
        input: () => raw,
        idempotencyKey: spec.idempotent ? (idempotencyKey as string | undefined) : undefined,
        idempotencyScope: { operation: `MCP ${spec.name}`, hashSubject: spec.name },
        doorScopes,
        prepare: spec.defaultProject
          ? async (a, input) => {
              if (input.projectId === undefined) input.projectId = (await defaultProject(a)).id;
            }
          : undefined,
      });
      let body = result.body as Record<string, unknown>;
      if (spec.finish && !ctx.asTask) body = await spec.finish(ctx, body);
      // Like REST's Idempotent-Replayed header: on writes only.
      return { body, replayed: op.kind === 'write' ? result.replayed : undefined };
    },
  };
}
