import { z } from 'zod';
import type { ErrorCode } from '../../lib/errors';
import { authorizationServerMetadataEndpoint, restResourceMetadataEndpoint } from '../oauth/actions/discovery';
import { introspectEndpoint } from '../oauth/actions/introspect';
import { registerEndpoint } from '../oauth/actions/register';
import { revokeEndpoint } from '../oauth/actions/revoke';
import { tokenEndpoint } from '../oauth/actions/token';
import type { OAuthEndpoint } from '../oauth/http';
import { byStatus, parserRefusalResponse, parserRefusalSchema } from './errors';

// The authorization server's endpoints (spec 5.3, api/oauth) in the OpenAPI document. They are
// not operations of the pipeline; each JSON endpoint declares the parameters it reads, the
// answer it gives and the codes it refuses with beside its chain (api/oauth/actions,
// OAuthEndpoint), and the document is made from those: form-encoded request bodies (RFC 6749
// 4.1.3; a JSON object of strings is accepted too, spec 5.3.4), the RFC response shapes, and
// errors in the standard envelope with the OAuth name as `code` (spec 7.3). Only the prose and
// the browser-facing /oauth/authorize are written here. The test suite holds the responses the
// OAuth tests receive to these descriptions (test/support/contract.ts).

type Json = Record<string, unknown>;

const SCHEMA_URI = (id: string) => `#/components/schemas/${id}`;

/** Every endpoint of the authorization server the document describes as JSON, by path. */
const ENDPOINTS = {
  '/.well-known/oauth-authorization-server': authorizationServerMetadataEndpoint,
  '/.well-known/oauth-protected-resource': restResourceMetadataEndpoint,
  '/oauth/token': tokenEndpoint,
  '/oauth/revoke': revokeEndpoint,
  '/oauth/introspect': introspectEndpoint,
  '/oauth/register': registerEndpoint,
} satisfies Record<string, OAuthEndpoint>;

/** What the shared machinery can answer on any endpoint: a failure, a dependency that did not answer. */
const COMMON: ErrorCode[] = ['internal_error', 'temporarily_unavailable'];

/** spec 7.3: the codes the endpoints answer (their `errors`), plus the listener's invalid_request. */
export const OAUTH_ERROR_CODES: readonly ErrorCode[] = [
  ...new Set<ErrorCode>(['invalid_request', ...Object.values(ENDPOINTS).flatMap((e) => e.errors), ...COMMON]),
];

/** The endpoints' answers as named components, referred to by their responses. */
export const OAUTH_SCHEMAS: Record<string, z.ZodType> = {
  OAuthTokenResponse: tokenEndpoint.response!,
  OAuthIntrospection: introspectEndpoint.response!,
  OAuthClient: registerEndpoint.response!,
  AuthorizationServerMetadata: authorizationServerMetadataEndpoint.response!,
  ProtectedResourceMetadata: restResourceMetadataEndpoint.response!,
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
function errors(endpoint: OAuthEndpoint): Json {
  return Object.fromEntries(
    byStatus([...endpoint.errors, ...COMMON]).map(([status, list]) => [
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

/** What a schema accepts, as JSON Schema (zod 4, draft 2020-12). */
function inputSchema(schema: z.ZodType): Json {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return json;
}

/** The body an endpoint reads its parameters from: form-encoded, or the same as a JSON object of strings. */
function formBody(endpoint: OAuthEndpoint): Json {
  const schema = inputSchema(endpoint.request!);
  return { required: true, content: { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } } };
}

/** The paths of the authorization server. */
export function oauthPaths(): Record<string, Record<string, Json>> {
  const tags = ['oauth'];
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
        requestBody: formBody(tokenEndpoint),
        responses: {
          200: { description: 'The tokens (RFC 6749 5.1).', content: json(ref('OAuthTokenResponse')) },
          ...errors(tokenEndpoint),
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
        requestBody: formBody(revokeEndpoint),
        responses: {
          200: { description: 'Revoked, or nothing to revoke; empty body.' },
          ...errors(revokeEndpoint),
        },
      },
    },
    '/oauth/introspect': {
      post: {
        operationId: 'oauth.introspect',
        summary: 'Token introspection (RFC 7662): `{ active: false }` and nothing else for an unusable token.',
        tags,
        security: [],
        requestBody: formBody(introspectEndpoint),
        responses: {
          200: { description: 'The token state.', content: json(ref('OAuthIntrospection')) },
          ...errors(introspectEndpoint),
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
          content: { 'application/json': { schema: inputSchema(registerEndpoint.request!) } },
        },
        responses: {
          201: { description: 'The registered client (RFC 7591 3.2.1).', content: json(ref('OAuthClient')) },
          ...errors(registerEndpoint),
        },
      },
    },
  };
}
