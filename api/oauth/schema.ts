import { z } from 'zod';

// The authorization server's requests and answers (spec 5.3): what each endpoint of
// api/oauth/actions reads and answers, typed by these schemas, and what the OpenAPI document
// describes them with (api/openapi/oauth.ts reads each endpoint's `request`, `response` and
// `errors`, api/oauth/http.ts OAuthEndpoint).

/** spec 5.3.1: the authorization-code grant, optionally with refresh tokens. */
export const REGISTRABLE_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

const optionalText = (max: number) => z.string().max(max).nullish();

// RFC 7591 2: metadata the server does not understand is ignored, hence loose().
export const registrationMetadataSchema = z
  .object({
    redirect_uris: z.array(z.string()).min(1).max(20),
    client_name: optionalText(200),
    client_uri: optionalText(2000),
    logo_uri: optionalText(2000),
    scope: optionalText(2000),
    // spec 5.3.1: public clients only; no client_secret is ever issued.
    token_endpoint_auth_method: z
      .literal('none', { error: (issue) => `"${String(issue.input)}" is not supported; only "none" (public clients, PKCE) is.` })
      .nullish(),
    // When omitted the client gets both (RFC 7591 3.2.1 lets the server substitute values; the
    // response says what was registered).
    grant_types: z
      .array(
        z.enum(REGISTRABLE_GRANT_TYPES, {
          error: (issue) => `"${String(issue.input)}" is not supported; use authorization_code and refresh_token.`,
        }),
      )
      .min(1)
      .max(5)
      .refine((types) => types.includes('authorization_code'), 'must include authorization_code.')
      .nullish(),
    response_types: z
      .array(z.literal('code', { error: 'must be ["code"]: only the authorization-code flow is supported.' }))
      .min(1)
      .max(5)
      .nullish(),
    software_id: optionalText(200),
    software_version: optionalText(200),
  })
  .loose()
  .describe('Metadata the server does not understand is ignored (RFC 7591 2).');

export type RegistrationMetadata = z.infer<typeof registrationMetadataSchema>;

// RFC 7591 3.2.1: the registered client, as lib/presenters/oauthClients.ts presents it.
export { oauthClientSchema, type OAuthClient } from '../../lib/presenters/oauthClients';

/**
 * RFC 8414 2: the authorization server's metadata (actions/discovery.ts answers it, metadata.ts
 * builds it with this type; the OpenAPI document describes it from this schema).
 */
export const authorizationServerMetadataSchema = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    registration_endpoint: z.string(),
    revocation_endpoint: z.string(),
    introspection_endpoint: z.string(),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    response_modes_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    revocation_endpoint_auth_methods_supported: z.array(z.string()),
    introspection_endpoint_auth_methods_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    authorization_response_iss_parameter_supported: z.boolean(),
    client_id_metadata_document_supported: z
      .boolean()
      .describe('draft-ietf-oauth-client-id-metadata-document 6: a client_id may be an HTTPS URL naming its metadata document'),
    service_documentation: z.string(),
  })
  .strict();

export type AuthorizationServerMetadata = z.infer<typeof authorizationServerMetadataSchema>;

/** A form parameter (RFC 6749 4.1.3); absent when sent empty (RFC 6749 3.1). */
const param = (description: string) => z.string().optional().describe(description);

/** RFC 8707 2: repeatable; an array of strings is the JSON spelling of a repeated parameter. */
const resourceParam = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .describe('RFC 8707 resource indicator; repeatable');

// RFC 6749 3.2: parameters the server does not understand are ignored, hence loose().

/** POST /oauth/token (RFC 6749 4.1.3, 6): the parameters actions/token.ts and the grants read. */
export const tokenRequestSchema = z
  .object({
    grant_type: z.enum(REGISTRABLE_GRANT_TYPES),
    client_id: z.string().describe('the registered client, or the URL of its Client ID Metadata Document'),
    code: param('authorization_code: the code'),
    redirect_uri: param('authorization_code: as in the authorization request'),
    code_verifier: param('authorization_code: the PKCE verifier'),
    refresh_token: param('refresh_token: the current refresh token'),
    scope: param('refresh_token: a subset of the granted scopes'),
    resource: resourceParam,
  })
  .loose();

/** POST /oauth/introspect (RFC 7662 2.1). */
export const introspectionRequestSchema = z
  .object({ token: z.string().describe('the access or refresh token'), token_type_hint: param('ignored: the prefix says') })
  .loose();

/** POST /oauth/revoke (RFC 7009 2.1). */
export const revocationRequestSchema = z
  .object({
    token: param('the access or refresh token'),
    token_type_hint: param('ignored: the prefix says'),
    client_id: z.string().describe('the client that holds the token'),
  })
  .loose();

/** RFC 6749 5.1, as actions/token.ts answers it (tokens.ts tokenResponse). */
export const oauthTokenResponseSchema = z
  .object({
    access_token: z.string().describe('oat_*; lives 1 hour (spec 8)'),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().describe('seconds'),
    scope: z.string().describe('space-separated granted scopes'),
    refresh_token: z.string().optional().describe('with offline_access; rotated on every use (spec 5.3.6)'),
  })
  .strict();

export type OAuthTokenResponse = z.infer<typeof oauthTokenResponseSchema>;

/** RFC 7662 2.2, as actions/introspect.ts answers it: an inactive token says nothing else. */
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

export type OAuthIntrospection = z.infer<typeof oauthIntrospectionSchema>;

/** RFC 9728 2, as metadata.ts builds it for the REST API and the MCP listener. */
export const protectedResourceMetadataSchema = z
  .object({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    resource_documentation: z.string(),
  })
  .strict();

export type ProtectedResourceMetadata = z.infer<typeof protectedResourceMetadataSchema>;
