import { z } from 'zod';
import type { ErrorCode } from '../../lib/errors';
import { authorizationServerMetadataSchema, oauthClientSchema, registrationMetadataSchema } from '../oauth/schema';
import { byStatus, parserRefusalResponse, parserRefusalSchema } from './errors';

// The authorization server's endpoints (spec 5.3, api/oauth) in the OpenAPI document. They are
// not operations of the pipeline, so they are described here by hand: form-encoded request
// bodies (RFC 6749 4.1.3; a JSON object of strings is accepted too, spec 5.3.4), the RFC
// response shapes, and errors in the standard envelope with the OAuth name as `code` (spec 7.3).
// The test suite holds the responses the OAuth tests receive to these descriptions
// (test/support/contract.ts).

type Json = Record<string, unknown>;

const SCHEMA_URI = (id: string) => `#/components/schemas/${id}`;

/** spec 7.3 plus the REST codes the endpoints' shared machinery can answer. */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_client_metadata',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
  'access_denied',
  'temporarily_unavailable',
  'rate_limited',
  'payload_too_large',
  'unsupported_media_type',
  'internal_error',
] as const satisfies readonly ErrorCode[];

/** RFC 6749 5.1. */
export const oauthTokenResponseSchema = z
  .object({
    access_token: z.string().describe('oat_*; lives 1 hour (spec 8)'),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().describe('seconds'),
    scope: z.string().describe('space-separated granted scopes'),
    refresh_token: z.string().optional().describe('with offline_access; rotated on every use (spec 5.3.6)'),
  })
  .strict();

/** RFC 7662 2.2: an inactive token says nothing else. */
export const oauthIntrospectionSchema = z.union([
  z.object({ active: z.literal(false) }).strict(),
  z
    .object({
      active: z.literal(true),
      scope: z.string(),
      client_id: z.string(),
      sub: z.string().describe('the acting user'),
      token_type: z.enum(['Bearer', 'refresh_token']),
      exp: z.number().int(),
      iat: z.number().int(),
      iss: z.string(),
      jti: z.string().optional().describe('access tokens only'),
      workspace_id: z.string(),
      aud: z.string().optional().describe('the resource an access token is bound to (RFC 8707), when bound to one'),
    })
    .strict(),
]);

/** RFC 9728 2. */
export const protectedResourceMetadataSchema = z
  .object({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    resource_documentation: z.string(),
  })
  .strict();

export const OAUTH_SCHEMAS: Record<string, z.ZodType> = {
  OAuthTokenResponse: oauthTokenResponseSchema,
  OAuthIntrospection: oauthIntrospectionSchema,
  OAuthClient: oauthClientSchema,
  AuthorizationServerMetadata: authorizationServerMetadataSchema,
  ProtectedResourceMetadata: protectedResourceMetadataSchema,
};

/** The 7.1 envelope with the OAuth names of 7.3 (and the REST codes above) as `code`. */
export const oauthErrorEnvelope: Json = {
  type: 'object',
  description: 'spec 7.3: the standard envelope with the OAuth error name in `error.code`.',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'string', enum: [...OAUTH_ERROR_CODES] },
        message: { type: 'string' },
        request_id: { type: 'string', pattern: '^req_' },
        docs_url: { type: 'string', format: 'uri' },
        details: { type: 'object' },
      },
      required: ['code', 'message', 'request_id', 'docs_url'],
      additionalProperties: false,
    },
  },
  required: ['error'],
  additionalProperties: false,
};

const json = (schema: Json) => ({ 'application/json': { schema } });
const ref = (id: string) => ({ $ref: SCHEMA_URI(id) });

/** The error answers of an endpoint, one per status (ERROR_STATUS) with the codes it carries. */
function errors(codes: ErrorCode[]): Json {
  return Object.fromEntries(
    byStatus(codes).map(([status, list]) => [
      status,
      {
        description: list.join(', '),
        content: json({
          allOf: [ref('OAuthError'), { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: list } } } } }],
        }),
        'x-error-codes': list,
      },
    ]),
  );
}

const str = (description: string): Json => ({ type: 'string', description });

/** A form-encoded body; the same parameters as a JSON object of strings are accepted too. */
function formBody(properties: Record<string, Json>, required: string[]): Json {
  const schema = { type: 'object', properties, required };
  return {
    required: true,
    content: { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } },
  };
}

/** The body /oauth/register validates with (api/oauth/schema.ts), as the request it accepts. */
export function registrationRequestSchema(): Json {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(registrationMetadataSchema, { io: 'input', unrepresentable: 'any' });
  return schema;
}

const resourceParam: Json = {
  oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
  description: 'RFC 8707 resource indicator; repeatable',
};

/** The paths of the authorization server. */
export function oauthPaths(): Record<string, Record<string, Json>> {
  const tags = ['oauth'];
  const common: ErrorCode[] = ['internal_error', 'temporarily_unavailable'];
  return {
    '/.well-known/oauth-authorization-server': {
      get: {
        operationId: 'oauth.metadata',
        summary: 'Authorization server metadata (RFC 8414).',
        tags,
        security: [],
        responses: {
          200: { description: 'The metadata; cacheable, any origin.', content: json(ref('AuthorizationServerMetadata')) },
          400: parserRefusalResponse('OAuthError'),
        },
      },
    },
    '/.well-known/oauth-protected-resource': {
      get: {
        operationId: 'oauth.protectedResource',
        summary: 'Protected resource metadata of the REST API (RFC 9728); `resource` is the indicator REST tokens are bound to.',
        tags,
        security: [],
        responses: {
          200: { description: 'The metadata; cacheable, any origin.', content: json(ref('ProtectedResourceMetadata')) },
          400: parserRefusalResponse('OAuthError'),
        },
      },
    },
    '/oauth/authorize': {
      get: {
        operationId: 'oauth.authorize',
        summary: 'Authorization request (RFC 6749 4.1.1): authorization code with PKCE S256 (spec 5.3.2).',
        description:
          'Redirects to sign-in and consent, then to `redirect_uri` with `code`, `state` and `iss` (RFC 9207); errors after the ' +
          'client and redirect URI are validated go back as `error`, `error_description` query parameters (spec 7.3). A request ' +
          'that cannot be trusted to redirect (unknown client, a client metadata document that cannot be fetched or is not acceptable, ' +
          'unregistered redirect URI) is answered with an HTML page naming the OAuth error, never redirected.',
        tags,
        security: [],
        parameters: [
          ['response_type', true, 'code'],
          ['client_id', true, 'the registered client, or the URL of its Client ID Metadata Document (docs/oauth.md)'],
          ['redirect_uri', true, 'exactly as registered'],
          ['code_challenge', true, 'BASE64URL(SHA-256(code_verifier))'],
          ['code_challenge_method', true, 'S256'],
          ['scope', false, 'space-separated (spec 5.2)'],
          ['state', false, 'returned unchanged'],
          ['resource', false, 'RFC 8707 resource indicator'],
        ].map(([name, required, description]) => ({ name, in: 'query', required, schema: str(description as string) })),
        responses: {
          303: {
            description: 'To the sign-in or consent page, or back to `redirect_uri` with `code` or `error`.',
            headers: { Location: { schema: { type: 'string' } } },
          },
          // spec 7.3 keeps the envelope for the JSON endpoints; this one answers a browser. The JSON
          // answer is the listener's, for a request refused before routing (a head over 16 KB, which a
          // long query string makes; malformed HTTP): no route, and so no HTML page, is known yet.
          400: {
            description:
              'The request cannot be trusted to redirect: an HTML page explains. A request refused before routing ' +
              '(a head over 16 KB, malformed HTTP) is answered with the JSON envelope and `invalid_request` instead.',
            headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
            content: { 'text/html': {}, 'application/json': { schema: parserRefusalSchema('OAuthError') } },
            'x-error-codes': ['invalid_request'],
          },
        },
      },
    },
    '/oauth/token': {
      post: {
        operationId: 'oauth.token',
        summary: 'Token request (RFC 6749 4.1.3, 6): exchange a code (with its PKCE verifier) or rotate a refresh token.',
        description:
          'Public clients: `client_id` only, no client authentication. Answers are `no-store`. A `client_id` that is a URL is ' +
          'checked against its Client ID Metadata Document (`invalid_client` when that fails); fetching one is limited per address (429 rate_limited).',
        tags,
        security: [],
        requestBody: formBody(
          {
            grant_type: { enum: ['authorization_code', 'refresh_token'] },
            client_id: str('the registered client, or the URL of its Client ID Metadata Document'),
            code: str('authorization_code: the code'),
            redirect_uri: str('authorization_code: as in the authorization request'),
            code_verifier: str('authorization_code: the PKCE verifier'),
            refresh_token: str('refresh_token: the current refresh token'),
            scope: str('refresh_token: a subset of the granted scopes'),
            resource: resourceParam,
          },
          ['grant_type', 'client_id'],
        ),
        responses: {
          200: { description: 'The tokens (RFC 6749 5.1).', content: json(ref('OAuthTokenResponse')) },
          ...errors([
            'invalid_request',
            'invalid_grant',
            'unauthorized_client',
            'unsupported_grant_type',
            'invalid_scope',
            'invalid_target',
            'invalid_client',
            'unsupported_media_type',
            'rate_limited',
            ...common,
          ]),
        },
      },
    },
    '/oauth/revoke': {
      post: {
        operationId: 'oauth.revoke',
        summary: 'Token revocation (RFC 7009): a refresh token takes its whole family, an access token only itself.',
        description: 'Once the client is known the answer is 200 with an empty body, whatever the token (RFC 7009 2.2).',
        tags,
        security: [],
        requestBody: formBody(
          { token: str('the access or refresh token'), token_type_hint: str('ignored'), client_id: str('the client that holds the token') },
          ['client_id'],
        ),
        responses: {
          200: { description: 'Revoked, or nothing to revoke; empty body.' },
          ...errors(['invalid_request', 'invalid_client', 'unsupported_media_type', 'rate_limited', ...common]),
        },
      },
    },
    '/oauth/introspect': {
      post: {
        operationId: 'oauth.introspect',
        summary: 'Token introspection (RFC 7662): `{ active: false }` and nothing else for an unusable token.',
        tags,
        security: [],
        requestBody: formBody({ token: str('the access or refresh token'), token_type_hint: str('ignored') }, ['token']),
        responses: {
          200: { description: 'The token state.', content: json(ref('OAuthIntrospection')) },
          ...errors(['invalid_request', 'unsupported_media_type', ...common]),
        },
      },
    },
    '/oauth/register': {
      post: {
        operationId: 'oauth.register',
        summary: 'Dynamic client registration (RFC 7591) of public clients (spec 5.3.1).',
        description: 'The same metadata again returns the existing client. Limited per address (429 rate_limited).',
        tags,
        security: [],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: registrationRequestSchema() } },
        },
        responses: {
          201: { description: 'The registered client (RFC 7591 3.2.1).', content: json(ref('OAuthClient')) },
          ...errors([
            'invalid_request',
            'invalid_client_metadata',
            'invalid_scope',
            'payload_too_large',
            'unsupported_media_type',
            'rate_limited',
            ...common,
          ]),
        },
      },
    },
  };
}
