import { config } from '../../lib/config';
import { ALL_SCOPES } from '../../lib/scopes';
import { REGISTRABLE_GRANT_TYPES, type AuthorizationServerMetadata, type ProtectedResourceMetadata } from './schema';

// Discovery documents (spec 5.3). The issuer is the API origin ({auth_url} = {base_url}).
// Read from config at call time, never captured at import.

export function issuer(): string {
  return config.publicUrl.replace(/\/+$/, '');
}

export function endpoint(path: string): string {
  return `${issuer()}${path}`;
}

/** RFC 8414 2. */
export function authorizationServerMetadata(): AuthorizationServerMetadata {
  return {
    issuer: issuer(),
    authorization_endpoint: endpoint('/oauth/authorize'),
    token_endpoint: endpoint('/oauth/token'),
    registration_endpoint: endpoint('/oauth/register'),
    revocation_endpoint: endpoint('/oauth/revoke'),
    introspection_endpoint: endpoint('/oauth/introspect'),
    scopes_supported: [...ALL_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...REGISTRABLE_GRANT_TYPES],
    // spec 5.3: public clients only, PKCE S256 only.
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    introspection_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    // RFC 9207: every authorization response carries `iss`.
    authorization_response_iss_parameter_supported: true,
    // draft-ietf-oauth-client-id-metadata-document 6, beside dynamic registration (clientDocuments.ts).
    client_id_metadata_document_supported: true,
    service_documentation: config.docsUrl,
  };
}

/**
 * RFC 9728 2, for any resource server of this authorization server: the REST API serves it
 * for config.publicUrl, the MCP listener for config.mcpPublicUrl.
 */
export function protectedResourceMetadata(resource: string): ProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [issuer()],
    scopes_supported: [...ALL_SCOPES],
    bearer_methods_supported: ['header'],
    resource_documentation: config.docsUrl,
  };
}

/** RFC 9728 5.1: the challenge a 401 carries so a client can find the authorization server. */
export function bearerChallenge(resource: string, error?: 'invalid_token'): string {
  const metadataUrl = `${resource.replace(/\/+$/, '')}/.well-known/oauth-protected-resource`;
  return `Bearer resource_metadata="${metadataUrl}"${error ? `, error="${error}"` : ''}`;
}
