import { z } from 'zod';

// RFC 7591 3.2.1: an OAuth client as the registration endpoint answers it. The OpenAPI document
// lists it with the OAuth shapes (api/openapi/oauth.ts), not among the resources' components.

/** RFC 7591 3.2.1: the registered client (public: no secret is ever issued). */
export const oauthClientSchema = z
  .object({
    client_id: z.string(),
    client_id_issued_at: z.number().int(),
    client_name: z.string().optional(),
    client_uri: z.string().optional(),
    logo_uri: z.string().optional(),
    redirect_uris: z.array(z.string()),
    scope: z.string().optional(),
    grant_types: z.array(z.string()),
    response_types: z.array(z.string()),
    token_endpoint_auth_method: z.literal('none'),
    software_id: z.string().optional(),
    software_version: z.string().optional(),
  })
  .strict();

export type OAuthClient = z.infer<typeof oauthClientSchema>;

/** The columns of a stored client (api/oauth/clients.ts ClientRow) its answer shows. */
export interface StoredClient {
  id: string;
  created_at: Date;
  client_name: string;
  client_uri: string | null;
  logo_uri: string | null;
  redirect_uris: string[];
  scope: string | null;
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
  software_id: string | null;
  software_version: string | null;
}

export function presentClient(c: StoredClient): OAuthClient {
  return {
    client_id: c.id,
    client_id_issued_at: Math.floor(c.created_at.getTime() / 1000),
    client_name: c.client_name || undefined,
    client_uri: c.client_uri ?? undefined,
    logo_uri: c.logo_uri ?? undefined,
    redirect_uris: c.redirect_uris,
    scope: c.scope ?? undefined,
    grant_types: c.grant_types,
    response_types: c.response_types,
    token_endpoint_auth_method: c.token_endpoint_auth_method,
    software_id: c.software_id ?? undefined,
    software_version: c.software_version ?? undefined,
  };
}
