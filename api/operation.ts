import type { z } from 'zod';
import type { ErrorCode } from '../lib/errors';
import type { ScopeRule } from '../lib/scopes';
import type { AuthContext } from './auth/context';
import type { ApiDeps } from './deps';
import type { ApiVersion } from './versioning';

// ARCHITECTURE.md "One operation, three doors": an operation is defined once (input schema,
// scope rule, handler) and REST routes and MCP tools are thin adapters over it.

export interface OperationContext {
  auth: AuthContext;
  requestId: string;
  apiVersion: ApiVersion;
  /** The process's outside-world clients, built once by the app factory (api/deps.ts); every door passes them. */
  deps?: ApiDeps;
}

/** The deps of a context; a door that forgot to pass them is a bug, not a client error. */
export function depsOf(ctx: OperationContext): ApiDeps {
  if (!ctx.deps) throw new Error("OperationContext.deps is missing: the door calling this operation must pass the app's ApiDeps");
  return ctx.deps;
}

export interface Operation<Schema extends z.ZodType = z.ZodType, Output extends z.ZodType = z.ZodType> {
  /** Stable name, also the MCP tool's default name source: "posts.create". */
  name: string;
  summary: string;
  /** read: the shared read rate-limit bucket; write: the write bucket, Idempotency-Key honoured. */
  kind: 'read' | 'write';
  scopes: ScopeRule | ((version: ApiVersion) => ScopeRule);
  /**
   * spec 5.4 client-role view: allow = reads normally, narrow = the handler narrows the rows,
   * deny = 403 forbidden_project with details.reason client_role.
   */
  clientRole: 'allow' | 'narrow' | 'deny';
  /** Where validation failures of this input land: query strings answer 400, bodies 422 (spec 7.2). */
  inputSource: 'query' | 'body';
  input: Schema;
  /**
   * The success body's shape (spec 2), defined beside the input in the resource's schema.ts
   * (CONVENTIONS.md habit 13): the handler's return type is inferred from it, the OpenAPI
   * document (api/openapi) publishes it, MCP tools list it as their outputSchema, and the test
   * suite checks every response against it.
   */
  output: Output;
  /**
   * Error codes this operation answers beyond the ones its kind, input and scopes imply
   * (spec 7.2; api/openapi/errors.ts derives those), e.g. 409 conflict when scheduling.
   */
  errors?: readonly ErrorCode[];
  /**
   * The answer carries a secret shown once (webhook signing secrets): its Idempotency-Key
   * record is stored encrypted, so the replay returns it but the database never holds it in clear.
   */
  secretResponse?: boolean;
  /** Only /v1/health: no credential, no workspace. */
  public?: boolean;
  handler: (ctx: OperationContext, input: z.infer<Schema>) => Promise<z.input<Output>>;
}

/** An operation as a resource defines it: `inputSource` follows `kind` unless it is given. */
export type OperationDefinition<Schema extends z.ZodType, Output extends z.ZodType> = Omit<Operation<Schema, Output>, 'inputSource'> &
  Partial<Pick<Operation<Schema, Output>, 'inputSource'>>;

/** A read takes its input from the query string, a write from the body. */
export function defineOperation<Schema extends z.ZodType, Output extends z.ZodType>(
  op: OperationDefinition<Schema, Output>,
): Operation<Schema, Output> {
  return { ...op, inputSource: op.inputSource ?? (op.kind === 'read' ? 'query' : 'body') };
}

export type AnyOperation = Operation<z.ZodType, z.ZodType>;
