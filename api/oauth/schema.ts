import { z } from 'zod';

// POST /oauth/register (RFC 7591, spec 5.3.1): the metadata the handler validates with
// (api/oauth/actions/register.ts) and the client it answers. The OpenAPI document describes the
// endpoint from these same schemas (api/openapi/oauth.ts).

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
