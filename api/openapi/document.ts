import { createHash } from 'node:crypto';
import { z } from 'zod';
import { config } from '../../lib/config';
import { ALL_SCOPES } from '../../lib/scopes';
import { operationScopes } from '../pipeline/index';
import type { AnyOperation } from '../operation';
import { namedComponents } from '../../lib/presenters/output';
import { routeTable, type RouteEntry } from '../rest/adapter';
import { restRouter } from '../rest/routes';
import type { ApiVersion } from '../versioning';
import { byStatus, ERROR_CATALOGUE, operationErrorCodes, parserRefusalResponse } from './errors';
import { readinessSchema } from '../health/ready';
import { OAUTH_SCHEMAS, oauthErrorEnvelope, oauthPaths } from './oauth';

// The OpenAPI 3.1 document of the REST door, generated from the route table (api/rest/routes.ts)
// and the operations' zod schemas (zod 4 JSON Schema, draft 2020-12, which is OpenAPI 3.1's
// dialect). Nothing here is written by hand per endpoint: an operation's input becomes its
// parameters or request body, its `output` the 200 response, its scope rule the security
// requirement, and the codes of spec 7.2 it can answer its error responses.

type Json = Record<string, unknown>;

const SCOPE_TEXT: Record<string, string> = {
  read: 'alias: every read scope',
  write: 'alias: every read and write scope (not posts:publish, settings:write or the destroy scopes)',
  offline_access: 'a refresh token (OAuth only)',
  'webhooks:manage': 'manage webhook endpoints (OAuth only)',
};

const SCHEMA_URI = (id: string) => `#/components/schemas/${id}`;

/** GET /v1/openapi.json answers this (router.ts); its top level is described with this schema. */
export const openApiDocumentSchema = z
  .object({
    openapi: z.literal('3.1.0'),
    jsonSchemaDialect: z.string(),
    info: z.object({ title: z.string(), version: z.string(), description: z.string() }),
    servers: z.array(z.object({ url: z.string() })),
    tags: z.array(z.object({ name: z.string() })),
    paths: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown()))),
    components: z.record(z.string(), z.record(z.string(), z.unknown())),
  })
  .describe('The OpenAPI 3.1 document of the pinned (or current) version.');

export type OpenApiDocument = z.infer<typeof openApiDocumentSchema>;

/** `/v1/posts/:postId` → `/v1/posts/{postId}`, and the parameter names. */
export function openApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const converted = path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: converted, params };
}

function strip(schema: Json): Json {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

function inputJsonSchema(op: AnyOperation): Json {
  return strip(z.toJSONSchema(op.input, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Json);
}

function securityOf(op: AnyOperation, version: ApiVersion): Json[] | undefined {
  if (op.public) return [];
  const rule = operationScopes(op, version);
  // OpenAPI 3.1 4.8.30: the scopes in one requirement object must all hold (allOf);
  // alternatives are separate objects (anyOf). Each holds for an API key (bearerAuth) or an
  // OAuth access token (oauth2), the same scope names for both (spec 5.2).
  const sets = rule === 'any' ? [[]] : 'allOf' in rule ? [[...rule.allOf]] : rule.anyOf.map((s) => [s]);
  return sets.flatMap((scopes) => [{ bearerAuth: scopes }, { oauth2: scopes }]);
}

function scopeText(op: AnyOperation, version: ApiVersion): string {
  if (op.public) return 'No credential.';
  const rule = operationScopes(op, version);
  if (rule === 'any') return 'Any valid credential.';
  if ('allOf' in rule) return `Scopes: ${rule.allOf.map((s) => `\`${s}\``).join(' and ')}.`;
  return `Scopes: one of ${rule.anyOf.map((s) => `\`${s}\``).join(', ')}.`;
}

const headerParam = (name: string): Json => ({ $ref: `#/components/parameters/${name}` });

function operationObject(
  entry: RouteEntry,
  version: ApiVersion,
  outputIds: Map<AnyOperation, string>,
): { path: string; method: string; object: Json } {
  const { op } = entry;
  const { path, params } = openApiPath(entry.path);
  const input = inputJsonSchema(op);
  const properties = (input.properties ?? {}) as Record<string, Json>;
  const required = new Set((input.required ?? []) as string[]);
  const parameters: Json[] = params.map((name) => ({ name, in: 'path', required: true, schema: properties[name] ?? { type: 'string' } }));
  let requestBody: Json | undefined;
  if (op.inputSource === 'query') {
    for (const [name, schema] of Object.entries(properties)) {
      if (params.includes(name)) continue;
      parameters.push({ name, in: 'query', required: required.has(name), schema });
    }
  } else {
    const bodyProps = Object.fromEntries(Object.entries(properties).filter(([k]) => !params.includes(k)));
    const bodyRequired = [...required].filter((k) => !params.includes(k));
    const body: Json = { ...input, properties: bodyProps };
    if (bodyRequired.length) body.required = bodyRequired;
    else delete body.required;
    requestBody = { required: bodyRequired.length > 0, content: { 'application/json': { schema: body } } };
  }
  parameters.push(headerParam('ServiceApiVersion'));
  if (!op.public) parameters.push(headerParam('ServiceWorkspaceId'));
  if (op.kind === 'write') parameters.push(headerParam('IdempotencyKey'));

  const referencesAResource = params.length > 0 || Object.keys(properties).some((k) => /Id$/.test(k));
  const codes = operationErrorCodes(op, {
    hasPathParams: referencesAResource,
    cursor: 'cursor' in properties,
    limit: 'limit' in properties,
  });

  const successHeaders: Json = {
    'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
    'Service-Api-Version': { $ref: '#/components/headers/Service-Api-Version' },
  };
  if (!op.public) {
    for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Cache-Control'])
      successHeaders[h] = { $ref: `#/components/headers/${h}` };
  }
  if (op.kind === 'write') successHeaders['Idempotent-Replayed'] = { $ref: '#/components/headers/Idempotent-Replayed' };
  const responses: Json = {
    200: {
      description: op.summary,
      headers: successHeaders,
      content: { 'application/json': { schema: { $ref: SCHEMA_URI(outputIds.get(op)!) } } },
    },
  };
  for (const [status, list] of byStatus(codes)) {
    const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
    if (status === 429) {
      for (const h of ['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
        headers[h] = { $ref: `#/components/headers/${h}` };
    }
    if (status === 401) headers['WWW-Authenticate'] = { description: 'RFC 6750 challenge.', schema: { type: 'string' } };
    responses[status] = {
      description: list.join(', '),
      headers,
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: SCHEMA_URI('Error') },
              { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: list } } } } },
            ],
          },
        },
      },
      'x-error-codes': list,
    };
  }
  const object: Json = {
    operationId: op.name,
    summary: op.summary,
    description: `${scopeText(op, version)}${op.kind === 'write' ? ' Idempotent with an Idempotency-Key (spec 8).' : ''}`,
    tags: [op.name.split('.')[0]],
    parameters,
    ...(requestBody ? { requestBody } : {}),
    responses,
    security: securityOf(op, version),
    'x-operation-kind': op.kind,
    'x-client-role': op.clientRole,
  };
  return { path, method: entry.method, object };
}

const errorEnvelope = {
  type: 'object',
  description: 'spec 7.1: every REST error. Branch on `code`; `message` is prose and not contractual.',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'Stable, machine-readable (spec 7.2).', enum: ERROR_CATALOGUE.map((e) => e.code) },
        message: { type: 'string' },
        request_id: { type: 'string', pattern: '^req_' },
        docs_url: { type: 'string', format: 'uri' },
        details: { type: 'object', description: 'Varies by code.' },
      },
      required: ['code', 'message', 'request_id', 'docs_url'],
      additionalProperties: false,
    },
  },
  required: ['error'],
  additionalProperties: false,
};

/** The document for one API version (scope rules may differ between versions, spec 9 rule 4). */
export function buildOpenApiDocument(opts: { version?: ApiVersion; routes?: readonly RouteEntry[] } = {}): OpenApiDocument {
  const version = opts.version ?? (config.apiVersions.current as ApiVersion);
  const routes = opts.routes ?? routeTable(restRouter());
  const registry = z.registry<{ id: string }>();
  const metaSchemas: Array<[string, z.ZodType]> = [
    ['Readiness', readinessSchema],
    ['OpenApiDocument', openApiDocumentSchema],
  ];
  // By name, not by the order their modules happened to load in: the document (and the client
  // types generated from it) must not change with what a process imported first.
  const outputs = [...namedComponents()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [id, schema] of [...outputs, ...Object.entries(OAUTH_SCHEMAS), ...metaSchemas]) registry.add(schema, { id });
  const outputIds = new Map<AnyOperation, string>();
  for (const { op } of routes) {
    if (outputIds.has(op)) continue;
    const id = `${op.name}.response`;
    if (!registry.has(op.output)) registry.add(op.output, { id });
    outputIds.set(op, registry.get(op.output)!.id);
  }
  const generated = z.toJSONSchema(registry, { uri: SCHEMA_URI, io: 'output', unrepresentable: 'any', target: 'draft-2020-12' });
  const schemas: Record<string, Json> = Object.fromEntries(
    Object.entries(generated.schemas)
      .filter(([k]) => k !== '__shared')
      .map(([k, v]) => [k, strip(v as Json)]),
  );
  schemas.Error = errorEnvelope;
  schemas.OAuthError = oauthErrorEnvelope;

  const paths: Record<string, Record<string, Json>> = {};
  for (const entry of routes) {
    const { path, method, object } = operationObject(entry, version, outputIds);
    (paths[path] ??= {})[method] = object;
  }
  paths['/v1/openapi.json'] = {
    get: {
      operationId: 'openapi.get',
      summary: 'This document.',
      tags: ['meta'],
      security: [],
      parameters: [headerParam('ServiceApiVersion')],
      responses: {
        200: {
          description: 'The OpenAPI 3.1 document of the pinned (or current) version.',
          content: { 'application/json': { schema: { $ref: SCHEMA_URI('OpenApiDocument') } } },
        },
        400: parserRefusalResponse('Error'),
      },
    },
  };

  Object.assign(paths, oauthPaths());

  paths['/v1/health/ready'] = {
    get: {
      operationId: 'health.ready',
      summary: 'Readiness: Postgres, Redis and Temporal reachable.',
      tags: ['health'],
      security: [],
      description: 'For load balancers and readiness probes; `/v1/health` is liveness. Unauthenticated, never cached.',
      responses: {
        200: { description: 'Every dependency answered.', content: { 'application/json': { schema: { $ref: SCHEMA_URI('Readiness') } } } },
        400: parserRefusalResponse('Error'),
        503: {
          description: 'At least one dependency did not answer within 2 s; `checks` names it.',
          content: { 'application/json': { schema: { $ref: SCHEMA_URI('Readiness') } } },
        },
      },
    },
  };

  const tags = [...new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((o) => (o.tags as string[]) ?? [])))].map(
    (name) => ({ name }),
  );

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Content Scheduling Service API',
      version,
      description:
        'Drafting, generating, scheduling and publishing posts. Errors: see the errors page (`docs_url` of every error). ' +
        `Pin a version with the Service-Api-Version header; supported: ${config.apiVersions.supported.join(', ')}.`,
    },
    servers: [{ url: config.publicUrl }],
    tags,
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (`sk_…`) or an OAuth 2.1 access token (spec 5.1). Scopes: spec 5.2.',
        },
        oauth2: {
          type: 'oauth2',
          description: 'spec 5.3: authorization code with PKCE, public clients registered dynamically (RFC 7591).',
          flows: {
            authorizationCode: {
              authorizationUrl: `${config.publicUrl}/oauth/authorize`,
              tokenUrl: `${config.publicUrl}/oauth/token`,
              refreshUrl: `${config.publicUrl}/oauth/token`,
              scopes: Object.fromEntries(
                ['read', 'write', ...ALL_SCOPES].map((s) => [s, SCOPE_TEXT[s] ?? `the \`${s}\` scope (spec 5.2)`]),
              ),
            },
          },
        },
      },
      parameters: {
        ServiceApiVersion: {
          name: 'Service-Api-Version',
          in: 'header',
          required: false,
          description: 'spec 9: dated version; the rolling default applies when omitted.',
          schema: { type: 'string', enum: [...config.apiVersions.supported] },
        },
        ServiceWorkspaceId: {
          name: 'Service-Workspace-Id',
          in: 'header',
          required: false,
          description: 'spec 5.5: act in another reachable workspace (OAuth tokens).',
          schema: { type: 'string' },
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'spec 8: 1 to 64 characters of A-Za-z0-9_-; the same key and body within 24 hours replays the first answer.',
          schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
        },
      },
      headers: {
        'X-Request-Id': { description: 'The request id (also `error.request_id`).', schema: { type: 'string' } },
        'Service-Api-Version': { description: 'The version that answered.', schema: { type: 'string' } },
        'X-RateLimit-Limit': { description: 'spec 8: requests allowed in the window.', schema: { type: 'integer' } },
        'X-RateLimit-Remaining': { description: 'spec 8: requests left in the window.', schema: { type: 'integer' } },
        'X-RateLimit-Reset': { description: 'spec 8: when the window frees a request (Unix seconds).', schema: { type: 'integer' } },
        'Retry-After': { description: 'spec 8: seconds to wait.', schema: { type: 'integer' } },
        'Idempotent-Replayed': {
          description: 'spec 8: whether this answer replays an earlier one.',
          schema: { type: 'string', enum: ['true', 'false'] },
        },
        'Cache-Control': { description: 'Authenticated answers are `no-store` (spec 2.2).', schema: { type: 'string' } },
      },
    },
  };
}

let cached: Map<string, { body: string; etag: string }> | undefined;

/** The serialised document per version, built once per process (the route table is static). */
export function openApiJson(version: ApiVersion): { body: string; etag: string } {
  cached ??= new Map();
  let hit = cached.get(version);
  if (!hit) {
    const body = JSON.stringify(buildOpenApiDocument({ version }));
    hit = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    cached.set(version, hit);
  }
  return hit;
}
