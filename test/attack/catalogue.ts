import { readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { AnyOperation } from '../../api/operation';
import type { ToolDefinition } from '../../api/mcp/tool';
import { TOOLS } from '../../api/mcp/tools/index';
import { restRouter } from '../../api/rest/routes';

// The attack suites' catalogue, derived from what the service actually serves: the REST route
// table (api/rest/routes.ts, read back from the router it builds) and the MCP tool registry
// (TOOLS). A route or tool added there is fuzzed and probed without touching these suites.

export interface RestRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  /** Path parameter names in order (`:postId` → postId). */
  params: string[];
  op: AnyOperation;
}

const OPERATIONS_DIR = path.resolve(import.meta.dirname, '..', '..', 'api', 'operations');

function isOperation(v: unknown): v is AnyOperation {
  if (!v || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.name === 'string' &&
    typeof o.handler === 'function' &&
    o.input instanceof z.ZodType &&
    (o.kind === 'read' || o.kind === 'write')
  );
}

/** Every operation exported under api/operations, by name. */
async function operationsByName(): Promise<Map<string, AnyOperation>> {
  const out = new Map<string, AnyOperation>();
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
  for (const file of walk(OPERATIONS_DIR)) {
    const mod = (await import(file)) as Record<string, unknown>;
    for (const v of Object.values(mod)) if (isOperation(v)) out.set(v.name, v);
  }
  return out;
}

/** The REST routes of the route table with the operation behind each (the layer carries its name). */
export async function restRoutes(): Promise<RestRoute[]> {
  const ops = await operationsByName();
  const routes: RestRoute[] = [];
  for (const layer of restRouter().stack) {
    const op = layer.name ? ops.get(layer.name) : undefined;
    if (!op) throw new Error(`route ${layer.methods.join(',')} ${String(layer.path)} has no operation named ${layer.name}`);
    for (const m of layer.methods.filter((x) => x !== 'HEAD')) {
      const p = String(layer.path);
      routes.push({ method: m as RestRoute['method'], path: p, params: [...p.matchAll(/:(\w+)/g)].map((x) => x[1]!), op });
    }
  }
  return routes;
}

export const mcpTools: readonly ToolDefinition[] = TOOLS;

/** The JSON Schema of an operation's input (as the MCP door publishes it). */
export function inputJsonSchema(op: AnyOperation): JsonSchema {
  const { $schema: _d, ...rest } = z.toJSONSchema(op.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest as JsonSchema;
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  additionalProperties?: boolean | JsonSchema;
  [k: string]: unknown;
}

/**
 * spec 7.2: the client-error codes a refusal may carry (7.3's OAuth names are the OAuth
 * endpoints' and never an operation's). 405/415 are the transport's own refusals (spec 7.1).
 */
export const CLIENT_ERROR_CODES: ReadonlySet<string> = new Set([
  'invalid_request',
  'bad_cursor',
  'bad_pagination',
  'version_unsupported',
  'unauthenticated',
  'invalid_token',
  'key_revoked',
  'key_expired',
  'spend_cap_exceeded',
  'scope_missing',
  'plan_not_eligible',
  'forbidden_project',
  'not_found',
  'method_not_allowed',
  'conflict',
  'idempotency_key_conflict',
  'payload_too_large',
  'unsupported_media_type',
  'unprocessable',
  'rate_limited',
  'workspace_unavailable',
  'usage_limit_exceeded',
]);
